// zulip-js ships no types; the tests use it as the untyped client it is.
declare module 'zulip-js' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const zulip: (config: { realm: string; username: string; apiKey: string }) => Promise<any>;
  export default zulip;
}
