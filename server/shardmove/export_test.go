package shardmove

// SetStepHook makes a test's f run after each step of a move (Step*); a
// panic in f stops the move there as its mover's death would.
func SetStepHook(o *Options, f func(step string)) { o.stepHook = f }
