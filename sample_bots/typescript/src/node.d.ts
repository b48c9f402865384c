// The few Node.js globals the bot uses. Debian has no @types/node, and the sandbox's build has no
// network to fetch it, so they are declared here (with `"types": []` in tsconfig.json, tsc loads
// no other declarations). `require` returns `any`: the gRPC objects are untyped, and referee.ts
// types the messages themselves.
declare const process: {
  env: Record<string, string | undefined>;
  exit(code: number): never;
};
declare const console: { log(...args: unknown[]): void; error(...args: unknown[]): void };
declare const __dirname: string;
declare const module: unknown;
declare function require(name: string): any; // eslint-disable-line @typescript-eslint/no-explicit-any
declare namespace require {
  const main: unknown;
}
