import type { Usage } from './response-resource.ts';

/** A user message kept verbatim in a compacted window, in the shape `ItemField` gives messages. */
export interface KeptUserMessage {
  id: string;
  type: 'message';
  role: 'user';
  status: 'completed';
  content: Record<string, unknown>[];
}

/** The item standing for everything else in the window; `encrypted_content` is opaque to clients. */
export interface CompactionOutputItem {
  id: string;
  type: 'compaction';
  encrypted_content: string;
}

/**
 * `CompactResource`: the answer of `POST /v1/responses/compact`. Its `output`
 * is the window's user messages, in order, then exactly one compaction item;
 * clients send it back as the `input` of their next response.
 */
export interface CompactResource {
  id: string;
  object: 'response.compaction';
  created_at: number;
  output: (KeptUserMessage | CompactionOutputItem)[];
  usage: Usage;
}
