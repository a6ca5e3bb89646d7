/** A write-risk custom tool, `ship_parcel`: under the default policy each call waits for approval. */
import { z } from 'zod';
import { defineTool } from '../../api/define-tool';

export const shipParcel = defineTool({
  name: 'ship_parcel',
  description: 'Ship a parcel to an address.',
  schema: z.object({ to: z.string().min(1) }),
  risk: 'write',
  run: async ({ to }) => ({ shipped: to }),
});
