"""How a build runs: worker processes over the cores, temporary folders, what a worker borrows from disk, the stage clock and progress."""
