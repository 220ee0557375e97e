// The lifecycle of ONE file (docs/specs/files-node.md §3.1, §4.2; docs/notes/files-node.md A.7, C3, C4, C6).
//
//   temporary ──file.confirm | file.repin──────────────────────────▶ confirmed
//   temporary ──file.expire [now > expiresAt] | file.unpin─────────▶ expired
//   confirmed ──file.unpin (POST unpin)─────────────────────────────▶ expired
//   expired   ──file.confirm | file.repin (re-pin, may fetch)──────▶ confirmed
//   confirmed ──file.demote [pinned and held] (collector handover)──▶ confirmed (pin dropped, not held here)
//   confirmed ──file.repin [demoted: not pinned]────────────────────▶ confirmed (pinned and held again)
//
// Per docs/DESIGN.md actor rule 3 this is data, not a live actor per file: the store's owner
// (actors/files/store.actor.ts) applies it to the persisted row with XState's pure `transition()` (see
// `applyFileEvent` below) and performs the returned effect (pin / unpin) itself. Events a state does not list
// leave the record unchanged, which is what makes confirm of a confirmed file, unpin of an expired file and expire
// of anything but a temporary file idempotent (notes C6); demote of anything but a held confirmed file changes
// nothing either.
//
// The effect actions `pinContent` / `unpinContent` are markers: they are chosen by guards on the record's
// `pinned` flag, so a demoted confirmed record (pinned false after a handover, notes A.4 rule 4c) never
// asks for an unpin of a pin it does not hold, and re-pinning it asks for the pin back.

import { and, assign, setup, transition } from 'xstate';
import { isPastExpiry } from '../../src/files/lifecycle.js';
import type { FileEvent, FileRecord, FileState } from '../../src/files/types.js';

/** The fields of a FileRecord this machine changes; everything else (cid, createdAt, dagBytes, origin) is fixed. */
export interface FileLifecycleContext {
  pinned: boolean;
  heldLocally: boolean;
  expiresAt: number | null;
  confirmedAt: number | null;
}

export type FileEffect = 'none' | 'pin' | 'unpin';

export const fileLifecycleMachine = setup({
  types: {
    context: {} as FileLifecycleContext,
    input: {} as FileLifecycleContext,
    events: {} as FileEvent,
  },
  actions: {
    /** Durable from now on (spec §4.2 confirm: "promoted to durable storage"); confirmedAt per notes C7. */
    markConfirmed: assign(({ event }) => ({ expiresAt: null, confirmedAt: event.at })),
    /** This node pins the file and keeps its copy. */
    hold: assign({ pinned: true, heldLocally: true }),
    /** Unpinned and no longer kept here (notes C3, C4); expiresAt and confirmedAt stay as they were. */
    release: assign({ pinned: false, heldLocally: false }),
    /** Effect marker: the caller must pin the content (may fetch it). Performed by the store's owner. */
    pinContent: () => {},
    /** Effect marker: the caller must remove the pin; blocks stay until collected (spec §4.2 unpin). */
    unpinContent: () => {},
  },
  guards: {
    isPinned: ({ context }) => context.pinned,
    isHeld: ({ context }) => context.pinned && context.heldLocally,
    /** Strictly after expiresAt (notes C3); the collector sends `file.expire` with its pass time. */
    isPastExpiry: ({ context, event }) => isPastExpiry(context.expiresAt, event.at),
  },
}).createMachine({
  id: 'fileLifecycle',
  context: ({ input }) => ({ ...input }),
  initial: 'temporary',
  states: {
    temporary: {
      on: {
        'file.confirm': [
          { guard: 'isHeld', target: 'confirmed', actions: 'markConfirmed' },
          { guard: 'isPinned', target: 'confirmed', actions: ['markConfirmed', 'hold'] },
          { target: 'confirmed', actions: ['markConfirmed', 'hold', 'pinContent'] },
        ],
        // The operator pin route makes the content durable: "registers it as confirmed" (spec §3.1).
        'file.repin': [
          { guard: 'isHeld', target: 'confirmed', actions: 'markConfirmed' },
          { guard: 'isPinned', target: 'confirmed', actions: ['markConfirmed', 'hold'] },
          { target: 'confirmed', actions: ['markConfirmed', 'hold', 'pinContent'] },
        ],
        'file.expire': [
          { guard: and(['isPastExpiry', 'isPinned']), target: 'expired', actions: ['release', 'unpinContent'] },
          { guard: 'isPastExpiry', target: 'expired', actions: 'release' },
        ],
        // Also the collector's watermark release of the oldest unconfirmed files (notes A.7 row 5).
        'file.unpin': [
          { guard: 'isPinned', target: 'expired', actions: ['release', 'unpinContent'] },
          { target: 'expired', actions: 'release' },
        ],
      },
    },
    confirmed: {
      on: {
        // file.confirm: idempotent, confirmedAt kept (notes C6). file.expire: confirmed files never expire.
        'file.unpin': [
          { guard: 'isPinned', target: 'expired', actions: ['release', 'unpinContent'] },
          { target: 'expired', actions: 'release' },
        ],
        // The collector's handover (notes A.4 rule 4c, A.7 "collector handover"): the file stays confirmed (the
        // cluster still holds it) but this node drops its pin and no longer counts as a holder. Only a pinned, held
        // copy is handed over; demoting a demoted record (or any other state) changes nothing.
        'file.demote': [{ guard: 'isHeld', actions: ['release', 'unpinContent'] }],
        // Idempotent when already pinned and held; a demoted record (handover) is taken back.
        'file.repin': [
          { guard: 'isHeld' },
          { guard: 'isPinned', actions: 'hold' },
          { actions: ['hold', 'pinContent'] },
        ],
      },
    },
    expired: {
      on: {
        // file.unpin and file.expire: idempotent. Confirm re-pins (may fetch) and confirms (notes C6).
        'file.confirm': [
          { guard: 'isPinned', target: 'confirmed', actions: ['markConfirmed', 'hold'] },
          { target: 'confirmed', actions: ['markConfirmed', 'hold', 'pinContent'] },
        ],
        // "A released file can be re-pinned … which registers it as confirmed again" (spec §3.1).
        'file.repin': [
          { guard: 'isPinned', target: 'confirmed', actions: ['markConfirmed', 'hold'] },
          { target: 'confirmed', actions: ['markConfirmed', 'hold', 'pinContent'] },
        ],
      },
    },
  },
});

export type FileLifecycleSnapshot = ReturnType<typeof fileLifecycleMachine.resolveState>;

/** The machine's view of a record. */
export function fileLifecycleContext(record: FileRecord): FileLifecycleContext {
  return {
    pinned: record.pinned,
    heldLocally: record.heldLocally,
    expiresAt: record.expiresAt,
    confirmedAt: record.confirmedAt,
  };
}

/** A snapshot of the machine standing where the persisted record stands. */
export function fileLifecycleSnapshot(record: FileRecord): FileLifecycleSnapshot {
  return fileLifecycleMachine.resolveState({ value: record.state, context: fileLifecycleContext(record) });
}

export interface FileTransitionResult {
  /** The record after the event; the very same object when nothing changed. */
  readonly record: FileRecord;
  /** Whether anything persisted changed (state or a context field); when false there is nothing to write. */
  readonly changed: boolean;
  /** What the caller must do to the pin set, before or with persisting `record` (notes A.8: pin + record together). */
  readonly effect: FileEffect;
}

/**
 * Applies one lifecycle event to a persisted record with XState's pure `transition()`: no actor, no I/O.
 * The effect comes from the effect markers the transition selected.
 */
export function applyFileEvent(record: FileRecord, event: FileEvent): FileTransitionResult {
  const [next, actions] = transition(fileLifecycleMachine, fileLifecycleSnapshot(record), event);
  let effect: FileEffect = 'none';
  for (const action of actions) {
    if (action.type === 'pinContent') effect = 'pin';
    else if (action.type === 'unpinContent') effect = 'unpin';
  }
  const state = next.value as FileState;
  const { pinned, heldLocally, expiresAt, confirmedAt } = next.context;
  const changed =
    state !== record.state ||
    pinned !== record.pinned ||
    heldLocally !== record.heldLocally ||
    expiresAt !== record.expiresAt ||
    confirmedAt !== record.confirmedAt;
  if (!changed) return { record, changed, effect };
  return { record: { ...record, state, pinned, heldLocally, expiresAt, confirmedAt }, changed, effect };
}
