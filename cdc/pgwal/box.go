package pgwal

import "unsafe"

// eface is the runtime's layout of an empty interface (any): its type
// descriptor and a pointer to its value.
type eface struct {
	typ, data unsafe.Pointer
}

// stringType is the type descriptor of string, as any holds it.
var stringType = func() unsafe.Pointer {
	var v any = ""
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// boxString returns vals[i] as an any that points at vals[i] itself:
// any(s) allocates a header for each string, and that allocation and the
// collector's tracing of it were a tenth of a 15-column WAL run's CPU
// (bench/README.md, issue 25); a tuple's values share one []string
// instead. vals[i] must not change afterwards (a string in an interface
// is immutable).
func boxString(vals []string, i int) any {
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: stringType, data: unsafe.Pointer(&vals[i])}
	return v
}
