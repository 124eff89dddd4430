import type { TurnRequest } from '../../providers/provider.ts';

/**
 * `max_tool_calls` over the hosted calls an upstream runs itself (OpenAI's
 * Responses API runs `web_search` and the rest within a model call): they
 * count beside the gateway's own calls, and each model call is sent what is
 * left as the upstream's own `max_tool_calls`, with no hosted tool offered
 * once nothing is.
 */
export class HostedCallBudget {
  /** Hosted calls the upstream made in this response (the loop counts each `hosted_item.done`). */
  made = 0;
  readonly #max: number | null;

  constructor(max: number | null) {
    this.#max = max;
  }

  /** `request` bounded by what `gatewayCalls` and the hosted calls made leave of the limit. */
  bound(request: TurnRequest, gatewayCalls: number): TurnRequest {
    if (request.hostedToolCallBudget === undefined || this.#max === null) return request;
    const left = this.#max - gatewayCalls - this.made;
    if (left > 0) return { ...request, hostedToolCallBudget: left };
    // A hosted tool the client forced (its choice made `required`) is not there to force any more.
    return { ...request, hostedTools: [], hostedInclude: [], hostedToolChoice: null, hostedToolCallBudget: 0, ...(request.hostedToolChoice && { toolChoice: 'auto' as const }) };
  }
}
