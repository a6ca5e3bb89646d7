/**
 * Runs before each file of the unit tier (vitest.unit.config.mts). The tier's files import no
 * socket module (test/support/unit-tier.mts), but fetch is a global: it fails here at once, naming
 * the rule, rather than reaching a network the unit tier promises not to use.
 */
globalThis.fetch = async (input: string | URL | Request) => {
  const url = input instanceof Request ? input.url : String(input);
  throw new Error(`fetch(${url}) in the unit tier, which has no network: give the code under test a fetch of its own, or test it in the whole suite (npm test)`);
};
