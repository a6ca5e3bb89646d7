/**
 * @grpc/grpc-js as @temporalio/client loads it: not a dependency of the harness, and what the
 * harness hands the client's connection (an interceptor) must come from the same copy. The CLI's
 * bundle (scripts/bundle-cli.ts) puts the copy it bundles for the client in this module's place.
 */
import { createRequire } from 'node:module';
import type * as GrpcJs from '@grpc/grpc-js';

export const grpcJs = createRequire(require.resolve('@temporalio/client'))('@grpc/grpc-js') as typeof GrpcJs;
