/** The slice of the Gemini API's `generateContent` wire format this provider reads and writes. */

export interface GeminiFunctionCall {
  /** Set by newer models; the gateway makes one up when it is missing. */
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  /** A thought summary, when `includeThoughts` asked for them. */
  thought?: boolean;
  /** Opaque; must go back on the same part in the next request. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: { name: string; description?: string; parametersJsonSchema?: unknown }[] }[];
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    presencePenalty?: number;
    frequencyPenalty?: number;
    responseMimeType?: string;
    responseJsonSchema?: unknown;
    thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number };
    /** Token log probabilities (`include: ["message.output_text.logprobs"]`), and how many alternatives with each (`top_logprobs`). */
    responseLogprobs?: boolean;
    logprobs?: number;
  };
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

/** One streamed chunk, or the whole answer of `generateContent` — or, in-band, an error. */
export interface GeminiResponse {
  candidates?: { content?: { role?: string; parts?: GeminiPart[] }; finishReason?: string; index?: number; logprobsResult?: GeminiLogprobs }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: { code?: number; message?: string; status?: string };
}

/** The log probabilities of a candidate's tokens in one chunk: the chosen token at each step, and the most likely alternatives. */
export interface GeminiLogprobs {
  chosenCandidates?: GeminiTokenLogprob[];
  topCandidates?: { candidates?: GeminiTokenLogprob[] }[];
}

export interface GeminiTokenLogprob {
  token?: string;
  logProbability?: number;
}
