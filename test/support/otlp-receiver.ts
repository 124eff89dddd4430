import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/JSON export carries it, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  /** The span's events (timed notes on it), in the order added. */
  events: ReceivedSpanEvent[];
  resource: Record<string, unknown>;
}

export interface ReceivedSpanEvent {
  name: string;
  timeNanos: bigint;
  attributes: Record<string, unknown>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/**
 * An OTLP/HTTP collector on loopback that takes trace exports
 * (`POST /v1/traces`) in both OTLP encodings, protobuf and JSON, as the
 * OpenTelemetry exporters send them, and keeps the spans. Answers like a
 * collector: 200 with an empty partial success.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: { path: string; headers: IncomingHttpHeaders; contentType: string | undefined }[] = [];
  #server: Server | null = null;

  /** Listens on a free port; returns the traces URL (…/v1/traces). */
  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (piece: Buffer) => chunks.push(piece));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '/', headers: req.headers, contentType: req.headers['content-type'] });
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(chunks);
        this.spans.push(...(req.headers['content-type'] === 'application/x-protobuf' ? decodeProtobufExport(body) : decodeExport(JSON.parse(body.toString('utf8')))));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ partialSuccess: {} }));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `${this.origin}/v1/traces`;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  /** Waits until at least `count` spans arrived (exports are batched and asynchronous). */
  async waitForSpans(count: number, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.spans.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} spans, received ${this.spans.length}: ${this.spans.map((span) => span.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.spans;
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };

function decodeExport(body: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || null,
          name: span.name,
          kind: span.kind,
          startNanos: BigInt(span.startTimeUnixNano),
          endNanos: BigInt(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes),
          status: { code: span.status?.code ?? 0, ...(span.status?.message && { message: span.status.message }) },
          events: (span.events ?? []).map((event: any) => ({ name: event.name, timeNanos: BigInt(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
          resource,
        });
      }
    }
  }
  return spans;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return null;
}

/**
 * Reads an `ExportTraceServiceRequest` in protobuf's wire format, by the
 * field numbers of opentelemetry-proto's trace.proto and common.proto — just
 * what the tests look at.
 */
function decodeProtobufExport(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of messages(body, 1)) {
    const [resource] = messages(resourceSpans, 1);
    const resourceAttributes = resource ? keyValues(resource, 1) : {};
    for (const scopeSpans of messages(resourceSpans, 2)) {
      for (const span of messages(scopeSpans, 2)) {
        const fields = readFields(span);
        const bytes = (field: number) => fields.find((entry) => entry.field === field)?.bytes;
        const number = (field: number) => fields.find((entry) => entry.field === field)?.number ?? 0n;
        const parent = bytes(4);
        const [status] = messages(span, 15);
        const statusFields = status ? readFields(status) : [];
        const message = statusFields.find((entry) => entry.field === 2)?.bytes?.toString('utf8');
        spans.push({
          traceId: bytes(1)!.toString('hex'),
          spanId: bytes(2)!.toString('hex'),
          parentSpanId: parent && parent.length > 0 ? parent.toString('hex') : null,
          name: bytes(5)?.toString('utf8') ?? '',
          kind: Number(number(6)),
          startNanos: number(7),
          endNanos: number(8),
          attributes: keyValues(span, 9),
          status: { code: Number(statusFields.find((entry) => entry.field === 3)?.number ?? 0n), ...(message && { message }) },
          events: messages(span, 11).map((event) => {
            const eventFields = readFields(event);
            return { name: eventFields.find((entry) => entry.field === 2)?.bytes?.toString('utf8') ?? '', timeNanos: eventFields.find((entry) => entry.field === 1)?.number ?? 0n, attributes: keyValues(event, 3) };
          }),
          resource: resourceAttributes,
        });
      }
    }
  }
  return spans;
}

interface WireField {
  field: number;
  /** Varint and fixed-width values. */
  number?: bigint;
  /** The raw 8 bytes of a fixed64 (doubles), or a length-delimited value. */
  bytes?: Buffer;
}

function readFields(buffer: Buffer): WireField[] {
  const fields: WireField[] = [];
  let offset = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[offset++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (offset < buffer.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    switch (tag & 7) {
      case 0:
        fields.push({ field, number: varint() });
        break;
      case 1:
        fields.push({ field, number: buffer.readBigUInt64LE(offset), bytes: buffer.subarray(offset, offset + 8) });
        offset += 8;
        break;
      case 2: {
        const length = Number(varint());
        fields.push({ field, bytes: buffer.subarray(offset, offset + length) });
        offset += length;
        break;
      }
      case 5:
        fields.push({ field, number: BigInt(buffer.readUInt32LE(offset)) });
        offset += 4;
        break;
      default:
        throw new Error(`unexpected protobuf wire type ${tag & 7}`);
    }
  }
  return fields;
}

function messages(buffer: Buffer, field: number): Buffer[] {
  return readFields(buffer).flatMap((entry) => (entry.field === field && entry.bytes ? [entry.bytes] : []));
}

function keyValues(buffer: Buffer, field: number): Record<string, unknown> {
  return Object.fromEntries(
    messages(buffer, field).map((pair) => {
      const fields = readFields(pair);
      const key = fields.find((entry) => entry.field === 1)!.bytes!.toString('utf8');
      const value = fields.find((entry) => entry.field === 2)?.bytes;
      return [key, value ? anyValue(value) : null];
    }),
  );
}

function anyValue(buffer: Buffer): unknown {
  const [entry] = readFields(buffer);
  if (!entry) return null;
  switch (entry.field) {
    case 1:
      return entry.bytes!.toString('utf8');
    case 2:
      return entry.number === 1n;
    case 3:
      return Number(BigInt.asIntN(64, entry.number!));
    case 4:
      return entry.bytes!.readDoubleLE(0);
    case 5:
      return messages(entry.bytes!, 1).map(anyValue);
    default:
      return null;
  }
}
