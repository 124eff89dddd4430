import { describe, expect, it } from 'vitest';
import { InFlightResponses, ResponseDeadline } from '../../src/engine/response-deadline.ts';

const client = () => new AbortController().signal;

describe('InFlightResponses', () => {
  it('holds exactly the deadlines not yet disposed, through removals from the middle, the end and twice over', () => {
    const inFlight = new InFlightResponses();
    const deadlines = Array.from({ length: 6 }, () => new ResponseDeadline(client(), 60_000, inFlight));
    expect(inFlight.size).toBe(6);
    for (const index of [1, 5, 0, 1]) deadlines[index]!.dispose();
    expect(inFlight.size).toBe(3);
    expect(new Set(inFlight.all())).toEqual(new Set([deadlines[2], deadlines[3], deadlines[4]]));
    // A later arrival takes the end; the ones moved by earlier removals still leave from where they now stand.
    const late = new ResponseDeadline(client(), 60_000, inFlight);
    deadlines[4]!.dispose();
    deadlines[2]!.dispose();
    expect(inFlight.all()).toEqual(expect.arrayContaining([deadlines[3], late]));
    expect(inFlight.size).toBe(2);
    for (const deadline of [...deadlines, late]) deadline.dispose();
    expect(inFlight.size).toBe(0);
  });

  it('stays exact over many random arrivals and departures', () => {
    const inFlight = new InFlightResponses();
    const live = new Set<ResponseDeadline>();
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let step = 0; step < 5_000; step++) {
      if (live.size === 0 || random() < 0.55) {
        const deadline = new ResponseDeadline(client(), 60_000, inFlight);
        live.add(deadline);
      } else {
        const leaving = [...live][Math.floor(random() * live.size)]!;
        leaving.dispose();
        live.delete(leaving);
      }
      expect(inFlight.size).toBe(live.size);
    }
    expect(new Set(inFlight.all())).toEqual(live);
    for (const deadline of live) deadline.dispose();
  });

  it('lets a shutdown stop every response in flight', () => {
    const inFlight = new InFlightResponses();
    const deadlines = Array.from({ length: 3 }, () => new ResponseDeadline(client(), 60_000, inFlight));
    deadlines[0]!.dispose();
    for (const deadline of inFlight.all()) deadline.shutDown();
    expect(deadlines.map((deadline) => deadline.cause)).toEqual([null, 'server_shutdown', 'server_shutdown']);
    expect(deadlines[1]!.signal.aborted).toBe(true);
    for (const deadline of deadlines) deadline.dispose();
  });
});
