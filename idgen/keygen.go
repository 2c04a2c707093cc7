package idgen

// KeyGenerator issues blocks of consecutive keys.
//
// NextN returns the first key of a block of n consecutive keys (first,
// first+1, ..., first+n-1), all larger than any key the generator issued
// before. MaxBatch is the largest n one call accepts; callers split larger
// requests into several blocks.
type KeyGenerator interface {
	NextN(n int) (first int64, err error)
	MaxBatch() int
}
