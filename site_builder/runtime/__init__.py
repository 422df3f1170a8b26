"""How a build runs: reading files that must be regular, worker processes over the cores, temporary folders, what a worker borrows from disk, the stage clock and progress."""
