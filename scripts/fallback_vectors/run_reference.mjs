// Run the inputs of make_inputs.py through the reference engine's fallback functions and print them with an
// ``expected`` result per case. Needs Node >= 23 (TypeScript transform) and a checkout of the reference
// ``src/`` whose relative ".js" imports were rewritten to ".ts":
//
//   git -C <mirror> archive main src | tar x -C /tmp/ref
//   find /tmp/ref/src -name '*.ts' -exec sed -i -E 's#(from ["'"'"']\.{1,2}/[^"'"'"']*)\.js(["'"'"'])#\1.ts\2#g' {} +
//   node --experimental-transform-types run_reference.mjs /tmp/ref/src < inputs.json > vectors.json
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const source = process.argv[2];
const fallback = await import(pathToFileURL(`${source}/assemble-fallback.ts`).href);
const inputs = JSON.parse(readFileSync(0, "utf8"));
const projection = { mode: "thread_bootstrap", epoch: "e" };

function attempt(run) {
  try {
    return run();
  } catch (error) {
    return { error: `${error.name}: ${error.message}` };
  }
}

for (const c of inputs.degraded) {
  c.expected = attempt(() => {
    const r = fallback.buildDegradedLiveAssembleResult({
      liveMessages: c.live,
      tokenBudget: c.budget,
      preserveSubstantiveAssistantTail: c.preserve,
      contextProjection: projection,
    });
    return { messages: r.messages, estimatedTokens: r.estimatedTokens, promptAuthority: r.promptAuthority };
  });
}
for (const c of inputs.forkAppend) {
  c.expected = attempt(() => {
    const r = fallback.appendForkBoundedLiveSuffixWithinBudget({
      assembledMessages: c.assembled,
      assembledEstimatedTokens: c.assembledEstimate,
      liveMessages: c.live,
      forkSourceMessageCount: c.forkCount,
      tokenBudget: c.budget,
      preserveSubstantiveAssistantTail: c.preserve,
    });
    return {
      messages: r.messages,
      estimatedTokens: r.estimatedTokens,
      appendedMessages: r.appendedMessages,
      appendedTokens: r.appendedTokens,
      evictedMessages: r.evictedMessages,
      evictedTokens: r.evictedTokens,
      overBudget: r.overBudget,
      protectedIndexes: [...r.protectedIndexes].sort((a, b) => a - b),
      logLevel: fallback.forkBoundedLiveSuffixAppendLogLevel(r),
    };
  });
}
for (const c of inputs.forkFallback) {
  c.expected = attempt(() => {
    const r = fallback.buildForkBoundedLiveFallback({
      liveMessages: c.live,
      forkSourceMessageCount: c.forkCount,
      tokenBudget: c.budget,
      bootstrapMaxTokens: c.bootstrapMax,
      preserveSubstantiveAssistantTail: c.preserve,
      contextProjection: projection,
    });
    return { messages: r.messages, estimatedTokens: r.estimatedTokens };
  });
}
process.stdout.write(JSON.stringify(inputs));
