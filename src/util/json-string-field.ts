/** The string at `key` of a JSON object text, or null when the text is not such an object or the field is no string. */
export function jsonStringField(text: string, key: string): string | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const value = (parsed as Record<string, unknown>)[key];
      if (typeof value === 'string') return value;
    }
  } catch {
    // not JSON
  }
  return null;
}
