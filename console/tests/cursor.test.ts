import { describe, expect, it } from 'vitest';
import { back, forward, pageOf, START, tokenOf } from '../src/state/cursor';

describe('cursor paging', () => {
  it('goes forward with each nextToken and back along the same tokens', () => {
    let trail = START;
    expect([pageOf(trail), tokenOf(trail)]).toEqual([1, undefined]);
    trail = forward(trail, 'a');
    trail = forward(trail, 'b');
    expect([pageOf(trail), tokenOf(trail)]).toEqual([3, 'b']);
    trail = back(trail);
    expect([pageOf(trail), tokenOf(trail)]).toEqual([2, 'a']);
    trail = back(back(back(trail)));
    expect([pageOf(trail), tokenOf(trail)]).toEqual([1, undefined]);
  });
});
