/**
 * The floor bench:eval sets a trial's CPU against: one child workflow per trial on the same dev
 * server with no harness at all. A parent starts `cases` children, at most `concurrency` at once
 * (as the eval workflow runs its trials), and each child runs one local activity that waits as
 * long as the scripted model does (as a trial's model call runs in its workflow task).
 */
const { executeChild, proxyLocalActivities, workflowInfo } = require('@temporalio/workflow');

const { wait } = proxyLocalActivities({ startToCloseTimeout: '1 minute' });

async function floorTrial(ms) {
  await wait(ms);
  return 'ok';
}

async function floorEval(cases, concurrency, ms) {
  const id = workflowInfo().workflowId;
  let next = 0;
  let done = 0;
  async function lane() {
    while (next < cases) {
      const i = next++;
      await executeChild(floorTrial, { args: [ms], workflowId: `${id}-trial-${i}` });
      done++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  return done;
}

module.exports = { floorTrial, floorEval };
