import fc from 'fast-check';

// CI pins the seed of every property test (.ci/run sets MELD_FC_SEED): a red CI then means a
// change broke something, not that a new random seed found an old bug. Local runs leave it
// unset and explore new seeds each time; fast-check prints the seed of any failure to replay.
const seed = process.env.MELD_FC_SEED;
if (seed) fc.configureGlobal({ seed: Number(seed) });
