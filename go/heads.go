package toolctx

import (
	"encoding/binary"
	"net/http"
	"sync"
)

// head is a request's method and headers as the core takes them: the
// bytes back to back, and their u32 little-endian lengths (the method,
// then name and value per header, repeated headers kept repeated).
type head struct {
	bytes []byte
	lens  []byte
}

var heads0 = sync.Pool{New: func() any { return &head{bytes: make([]byte, 0, 2048), lens: make([]byte, 0, 128)} }}

func heads(method string, header http.Header) *head {
	h := heads0.Get().(*head)
	h.bytes, h.lens = h.bytes[:0], h.lens[:0]
	h.add(method)
	for name, values := range header {
		for _, value := range values {
			h.add(name)
			h.add(value)
		}
	}
	return h
}

func (h *head) add(s string) {
	h.bytes = append(h.bytes, s...)
	h.lens = binary.LittleEndian.AppendUint32(h.lens, uint32(len(s)))
}

func (h *head) release() {
	if cap(h.bytes) <= 1<<16 {
		heads0.Put(h)
	}
}
