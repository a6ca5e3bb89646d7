/**
 * Two tools written in TypeScript: a lookup that is safe to run again, and a refund that must
 * never run twice. The orders stand for your database; the refund stands for a payment API
 * whose token only this tool gets (ctx.secrets), never the model, the history or other tools.
 */
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, ToolError } from 'durable-agent-harness';

const ORDERS = new Map([
  ['A-1001', { order_id: 'A-1001', item: 'teapot', price_eur: 39, status: 'delivered' }],
  ['A-1002', { order_id: 'A-1002', item: 'tea sampler', price_eur: 18, status: 'shipped' }],
]);

/** Read-only and idempotent: the default policy runs it without asking, and a lost worker's call simply runs again. */
export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by its id (like A-1001). Returns the item, price and delivery status.',
  schema: z.object({ order_id: z.string().regex(/^A-\d{4}$/).describe('The order id, e.g. A-1001.') }),
  risk: 'read_only',
  idempotent: true,
  timeoutSec: 10,
  run: async ({ order_id }) => {
    const order = ORDERS.get(order_id);
    if (!order) throw new ToolError(`there is no order ${order_id}`, { suggestion: 'ask the user to check the order id' });
    return order;
  },
});

/** A write that is not idempotent: the default policy asks a person first, and it runs at most once per call. */
export const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund a delivered order in full. Use only when the user asks for a refund and says why. Returns the refund id.',
  schema: z.object({
    order_id: z.string().regex(/^A-\d{4}$/),
    reason: z.string().min(3).max(200).describe('Why, in the user\'s words.'),
  }),
  risk: 'write',
  timeoutSec: 30,
  run: async ({ order_id, reason }, ctx) => {
    const order = ORDERS.get(order_id);
    if (!order) throw new ToolError(`there is no order ${order_id}`);
    if (order.status !== 'delivered') throw new ToolError(`order ${order_id} is ${order.status}, not delivered`, { suggestion: 'only delivered orders can be refunded' });
    if (!ctx.secrets.PAYMENTS_TOKEN) throw new ToolError('the payment service is not configured on this worker', { recoverable: false });
    ctx.log.info('refunding', { order_id });
    // Stands for the payment API call; the ledger in the session's workspace shows what happened.
    await appendFile(path.join(ctx.workspace, 'refunds.log'), `${order_id}\t${order.price_eur} EUR\t${reason}\n`);
    return { refund_id: `R-${order_id}`, order_id, amount_eur: order.price_eur, refunded: true };
  },
});
