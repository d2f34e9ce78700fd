import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full collection of the bench process's own heap, between runs: the frames its clients parsed in one run
 * (a bare ws burst leaves some 100,000 behind) are otherwise collected in whichever run comes next, and on a
 * 2-core machine V8's marking and sweeping take the other core from that run's server.
 */
setFlagsFromString('--expose-gc');
export const collectGarbage = runInNewContext('gc') as () => void;
