// Reads a text/event-stream body as parsed JSON events. EventSource cannot send
// an Authorization header, so the page reads the stream through fetch.

/**
 * Yields each `data:` payload of `body` as JSON, in order; comments
 * (keep-alives) and the closing `[DONE]` are skipped.
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<any>}
 */
export async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replaceAll('\r\n', '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
          .join('\n');
        if (data && data !== '[DONE]') yield JSON.parse(data);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
