-- Nothing to undo: the mended times are what the blocks hold.
SELECT 1;
