// Expected values for tests/unit/test_live_intercept.py, taken from Node's own
// string, regex, Intl and crypto behaviour (written for ctxview, not copied).
// Regenerate: /work/tools/node24 gen_live_intercept_vectors.mjs > live_intercept_vectors.json
import { createHash } from "node:crypto";

const collapse = (text) => text.replace(/\s+/g, " ").trim();
const clip = (text, limit) => {
  const flat = collapse(text);
  return flat.length > limit ? `${flat.slice(0, limit)}...` : flat;
};
const en = (n) => n.toLocaleString("en-US");

function textSummary(content, fileName) {
  const lines = content.split(/\r?\n/);
  const flat = collapse(content);
  const words = flat ? flat.split(/\s+/).length : 0;
  const picked = [];
  for (const line of lines) {
    const t = line.trim();
    if (t.length <= 1) continue;
    if (/^#{1,6}\s+/.test(t) || /^[A-Z0-9][A-Z0-9\s:_-]{6,}$/.test(t)) picked.push(clip(t, 160));
  }
  const headers = Array.from(new Set(picked.slice(0, 18)));
  const opening = clip(content.slice(0, 500), 500);
  const closing = clip(content.slice(-500), 500);
  return [
    fileName ? `Text exploration summary (${fileName}):` : "Text exploration summary:",
    `Characters: ${en(content.length)}.`,
    `Words: ${en(words)}.`,
    `Lines: ${en(lines.length)}.`,
    `Detected section headers: ${headers.length ? headers.join(" | ") : "none detected"}.`,
    `Opening excerpt: ${opening || "(empty)"}.`,
    `Closing excerpt: ${closing || "(empty)"}.`,
  ].join("\n");
}

function fileId(conversationId, toolName, callId, content) {
  const h = createHash("sha256");
  const parts = ["live-tool-output-v1", String(conversationId), toolName, callId ?? "", content];
  parts.forEach((part, i) => {
    if (i > 0) h.update("\0");
    h.update(part);
  });
  return `file_${h.digest("hex").slice(0, 16)}`;
}

function reference(id, toolName, bytes, summary) {
  return [
    `[LCM Tool Output: ${id} | tool=${toolName.trim() || "unknown"} | ${en(Math.max(0, bytes))} bytes]`,
    "",
    "Exploration Summary:",
    summary.trim() || "(no summary available)",
    "",
    'Call lcm_describe(id="<file_id above>", expandFile=true) to fetch the full output content from disk.',
  ].join("\n");
}

// --- summaries of awkward texts -------------------------------------------------------------
const emoji = "\u{1F600}";
const summaryInputs = {
  empty: "",
  blank: " \n\t\u00a0\n",
  one_char_lines: "a\nb\n#\nZ",
  crlf_and_lone_cr: "alpha\r\nbeta\rgamma\n\ndelta",
  js_only_whitespace: "one\u00a0two\u2028three\ufefffour\u3000five\u1680six",
  not_js_whitespace: "one\u001ctwo\u0085three\u200bfour",
  markdown_headers: "# Title\n## Sub title\n####### seven\n#nospace\n###\tTabbed   heading  \n  # Indented\n# Title",
  caps_headers: "SECTION ONE\nSHORT\nAB CD EF\nNOT-A_HEADER: YES\nMixed Case Heading\nÄÖÜ UMLAUT CAPS\n12345678\nERROR\u00a0CODE 42\n",
  many_headers: Array.from({ length: 25 }, (_, i) => `# Heading ${i % 20}`).join("\n") + "\n",
  long_header: `# ${"word ".repeat(50)}end`,
  long_header_astral: `# ${"x".repeat(157)}${emoji}${emoji}`,
  cjk: "缓存失效 日本語のテキスト\n한국어 문장\n".repeat(40),
  emoji_cut_head: `${"a".repeat(499)}${emoji}${"b".repeat(600)}`,
  emoji_cut_tail: `${"a".repeat(600)}${emoji}${"b".repeat(499)}`,
  lone_surrogates: `start \ud800 middle \udfff end`,
  big_numbers: ("w ".repeat(1000) + "\n").repeat(3),
};
const summaries = Object.entries(summaryInputs).map(([name, content]) => ({
  name,
  content,
  fileName: "exec.txt",
  summary: textSummary(content, "exec.txt"),
}));

// --- payloads the message-level tests externalize ----------------------------------------------
const hundredK = ("x".repeat(99) + "\n").repeat(1000);
const payloads = {
  at_default_threshold: { conversationId: 1, toolName: "bash", callId: "call_a", content: hundredK },
  small_plain: { conversationId: 7, toolName: "exec", callId: "c1", content: "0123456789012345678901234567890123456789" },
  string_content: { conversationId: 7, toolName: "exec", callId: "c1", content: "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ" },
  second_block: { conversationId: 7, toolName: "exec", callId: "c1", content: "second block second block second block!" },
  other_message: { conversationId: 7, toolName: "grep", callId: "c2", content: "# MATCHES\nsrc/a.py:1: import os\nsrc/b.py:2: import re" },
  renamed_current_turn: { conversationId: 7, toolName: "fetch_logs", callId: "c9", content: "log line one\nlog line two\nlog line three" },
  not_renamed_older_turn: { conversationId: 7, toolName: "exec", callId: "c9", content: "log line one\nlog line two\nlog line three" },
  function_call_output: { conversationId: 7, toolName: "tool-result", callId: "fc_1", content: "structured output text, long enough to stub" },
  tool_result_nested: { conversationId: 7, toolName: "search", callId: "tu_1", content: "first hit text here\nsecond hit text here" },
  json_text: { conversationId: 7, toolName: "exec", callId: "c1", content: "the text inside a JSON payload, long enough" },
  no_call_id: { conversationId: 7, toolName: "exec", callId: null, content: "a result without any call id at all here" },
  empty_tool_name: { conversationId: 7, toolName: "", callId: "c1", content: "a result whose tool name is empty string" },
  read_recovered_big: { conversationId: 7, toolName: "read", callId: "r1", content: "FULL FILE CONTENTS\nline 2 of the host file\nline 3 of the host file\n" },
  unicode_payload: { conversationId: 7, toolName: "exec", callId: "c1", content: `héllo ${emoji} 缓存 \ud800 end of text` },
};
for (const entry of Object.values(payloads)) {
  entry.fileId = fileId(entry.conversationId, entry.toolName, entry.callId, entry.content);
  entry.bytes = Buffer.byteLength(entry.content, "utf8");
  entry.summary = textSummary(entry.content, `${entry.toolName}.txt`);
  entry.reference = reference(entry.fileId, entry.toolName, entry.bytes, entry.summary);
  if (entry.content === hundredK) {
    entry.content = null; // rebuilt by the test: ("x" * 99 + "\n") * 1000
    entry.contentLength = hundredK.length;
  }
}

const locale = [0, 7, 999, 1000, 12345, 112200, 1234567, 2 ** 31].map((n) => [n, en(n)]);

process.stdout.write(`${JSON.stringify({ summaries, payloads, locale }, null, 1)}\n`);
