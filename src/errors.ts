// One error class per failure kind; callers match on `name`, never on message text (docs/DESIGN.md, Style).

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** Every problem found, one line each, reported at once. */
    readonly problems: readonly string[] = [],
    /** The configuration file the problems are in, when one was read (the lookup may have picked it implicitly). */
    readonly file?: string,
  ) {
    super(message);
  }
}

export class ActorUnavailableError extends Error {
  override readonly name = 'ActorUnavailableError';
  constructor(readonly systemId: string) {
    super(`actor ${systemId} is not running`);
  }
}

/** A message no handler of the receiving actor knows (a mistyped or stale message type). */
export class UnknownMessageError extends Error {
  override readonly name = 'UnknownMessageError';
  constructor(readonly messageType: string) {
    super(`no handler for the message '${messageType}'`);
  }
}

/** An ask whose message the actor would drop in its current state (XState drops events nothing handles). */
export class MessageNotAcceptedError extends Error {
  override readonly name = 'MessageNotAcceptedError';
  constructor(
    readonly systemId: string,
    readonly messageType: string,
  ) {
    super(`actor ${systemId} does not accept '${messageType}' in its current state`);
  }
}

export class AskTimeoutError extends Error {
  override readonly name = 'AskTimeoutError';
  constructor(readonly systemId: string, readonly timeoutMs: number) {
    super(`actor ${systemId} did not answer within ${timeoutMs} ms`);
  }
}

export class AbortedError extends Error {
  override readonly name = 'AbortError';
  constructor(message = 'the operation was aborted') {
    super(message);
  }
}
