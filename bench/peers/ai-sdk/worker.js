// The peer's worker: node worker.js <temporal address> <task queue> <model base URL>.
// Prints "ready" once it polls; SIGTERM shuts it down (the SDK's runtime handles the signal).
const { DefaultLogger, NativeConnection, Runtime, Worker } = require('@temporalio/worker');
const { AiSdkPlugin } = require('@temporalio/ai-sdk');
const { createOpenAICompatible } = require('@ai-sdk/openai-compatible');
const activities = require('./activities');

async function main() {
  const [address, taskQueue, baseURL] = process.argv.slice(2);
  // Warnings only, on stderr: stdout carries the one "ready" line.
  Runtime.install({ logger: new DefaultLogger('WARN', (entry) => process.stderr.write(`[peer ${entry.level}] ${entry.message}\n`)) });
  const connection = await NativeConnection.connect({ address });
  const modelProvider = createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'bench' });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities,
    plugins: [new AiSdkPlugin({ modelProvider })],
  });
  await worker.runUntil(async () => {
    process.stdout.write('ready\n');
    await new Promise((resolve) => process.stdin.on('end', resolve).resume());
  });
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
