// A stand-in worker process for exactly-once.test.ts: it starts one keyed command and is
// SIGKILLed by the test while the command runs (the container carries on without it).
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';

const { home, sessionId, key, command } = JSON.parse(process.env.EXEC_CHILD_ARGS ?? '{}') as Record<string, string>;
new DockerSandbox({ home: home!, sessionId: sessionId! })
  .exec(command!, { timeoutMs: 30_000, key: key! })
  .then((r) => process.stdout.write(`${JSON.stringify(r)}\n`))
  .catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  });
