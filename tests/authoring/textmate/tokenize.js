// Tokenize files with VS Code's TextMate engine (vscode-textmate + vscode-oniguruma) and print
// JSON: {file: [[line, [[text, [scopes...]], ...]], ...]}. Usage: node tokenize.js GRAMMAR FILE...
"use strict";
const fs = require("fs");
const path = require("path");
const oniguruma = require("vscode-oniguruma");
const textmate = require("vscode-textmate");

async function main() {
  const [grammarPath, ...files] = process.argv.slice(2);
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath),
  });
  const grammar = await registry.loadGrammar("source.mlab");
  const out = {};
  for (const file of files) {
    let state = textmate.INITIAL;
    out[file] = fs.readFileSync(file, "utf8").split(/\r?\n/).map((line) => {
      const result = grammar.tokenizeLine(line, state);
      state = result.ruleStack;
      return [line, result.tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes])];
    });
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => { process.stderr.write(String(error.stack || error) + "\n"); process.exit(1); });
