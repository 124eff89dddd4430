import { GatewayError } from '../errors/gateway-error.ts';
import type { OfferedTool } from '../executors/tool-executor.ts';
import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../providers/provider.ts';

/** Where an upstream's refusal points into the request's tools: OpenAI's `tools[14].function.parameters`, Anthropic's `tools.14.custom.input_schema`. */
const TOOL_PARAM = /^tools(?:\[(\d+)\]|\.(\d+))(?:[.[]|$)/;

/**
 * The model calls of a response offered tools of the gateway's own (an MCP
 * server's). An upstream that refuses one of those (a schema it cannot take:
 * an array without `items`, a keyword it does not know) names it by its place
 * in the request's tools. Passed on, that 400 told the client to fix a tool
 * it never sent, on every request, while the operator heard nothing; it
 * becomes a 502 naming the tool and its server, which the operator can fix
 * (or leave out, `allowedTools`). Refusals of the client's own tools pass as
 * they came.
 */
export class OfferedToolRefusals implements Provider {
  readonly #inner: Provider;
  readonly #offered: ReadonlyMap<string, OfferedTool>;

  constructor(inner: Provider, offered: ReadonlyMap<string, OfferedTool>) {
    this.#inner = inner;
    this.#offered = offered;
  }

  get name(): string {
    return this.#inner.name;
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    try {
      return await this.#inner.startTurn(request, signal);
    } catch (error) {
      throw this.#blamed(error, request) ?? error;
    }
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #blamed(error: unknown, request: TurnRequest): GatewayError | null {
    if (!(error instanceof GatewayError) || error.status >= 500 || error.param === null) return null;
    const place = TOOL_PARAM.exec(error.param);
    if (!place) return null;
    const tool = request.tools[Number(place[1] ?? place[2])];
    const offered = tool && this.#offered.get(tool.name);
    if (!offered) return null;
    const source = offered.operatorServer ? `the operator's MCP server '${offered.operatorServer}'` : 'an MCP server the request named';
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_refused_tool',
      message: `The upstream '${this.#inner.name}' refused the tool '${tool.name}' from ${source}: ${error.message} The tool's definition comes from that server, not from this request; it must be fixed there or left out of what the server offers.`,
      cause: error,
    });
  }
}
