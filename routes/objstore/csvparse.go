package objstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// csvField is one parsed field; quoted tells "" (an empty string) from an
// empty field (NULL).
type csvField struct {
	b      []byte
	quoted bool
}

type span struct {
	start, end int
	quoted     bool
}

// csvParser reads RFC 4180 records (CRLF or LF line ends, quoted fields
// spanning lines, "" for a quote inside quotes). Blank lines are skipped,
// except in a file of one column: there a blank line is a row whose one
// field is NULL (the encoder writes it so). The fields it returns are
// valid until the next call.
type csvParser struct {
	r      *bufio.Reader
	single bool  // the header has one column: a blank line is a record
	line   int   // line number of the record last returned
	nextLn int   // line number of the next line to read
	n      int64 // bytes consumed
	rec    []byte
	spans  []span
	fields []csvField
	long   []byte
}

func newCSVParser(r io.Reader) *csvParser {
	return &csvParser{r: bufio.NewReaderSize(r, 256<<10), nextLn: 1}
}

// readLine returns the next line with its terminator; io.EOF at the end.
func (p *csvParser) readLine() ([]byte, error) {
	b, err := p.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		p.long = append(p.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = p.r.ReadSlice('\n')
			p.long = append(p.long, b...)
		}
		b = p.long
	}
	p.n += int64(len(b))
	p.nextLn++
	if errors.Is(err, io.EOF) && len(b) > 0 {
		err = nil
	}
	return b, err
}

// next returns the next record's fields, or io.EOF.
func (p *csvParser) next() ([]csvField, error) {
	line, err := p.nonBlankLine()
	if err != nil {
		return nil, err
	}
	p.rec, p.spans = p.rec[:0], p.spans[:0]
	for pos := 0; ; {
		var sp span
		if pos < len(line) && line[pos] == '"' {
			sp, line, pos, err = p.quoted(line, pos+1)
			if err != nil {
				return nil, err
			}
		} else {
			sp, pos = p.unquoted(line, pos)
		}
		p.spans = append(p.spans, sp)
		if pos < len(line) && line[pos] == ',' {
			pos++
			continue
		}
		if rest := line[pos:]; len(bytes.TrimRight(rest, "\r\n")) > 0 {
			return nil, fmt.Errorf("line %d: unexpected %q after a quoted field", p.nextLn-1, rest)
		}
		return p.collect(), nil
	}
}

func (p *csvParser) nonBlankLine() ([]byte, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return nil, err
		}
		if p.single || len(bytes.TrimRight(line, "\r\n")) > 0 {
			p.line = p.nextLn - 1
			return line, nil
		}
	}
}

// unquoted reads a field up to a comma or the line end.
func (p *csvParser) unquoted(line []byte, pos int) (span, int) {
	end := bytes.IndexByte(line[pos:], ',')
	if end < 0 {
		end = len(bytes.TrimRight(line[pos:], "\r\n"))
	}
	start := len(p.rec)
	p.rec = append(p.rec, line[pos:pos+end]...)
	return span{start: start, end: len(p.rec)}, pos + end
}

// quoted reads a quoted field from after its opening quote, reading more
// lines while it stays open; it returns the line and position after the
// closing quote.
func (p *csvParser) quoted(line []byte, pos int) (span, []byte, int, error) {
	start := len(p.rec)
	for {
		i := bytes.IndexByte(line[pos:], '"')
		if i < 0 {
			p.rec = append(p.rec, line[pos:]...)
			next, err := p.readLine()
			if err != nil {
				return span{}, nil, 0, fmt.Errorf("line %d: unterminated quoted field", p.line)
			}
			line, pos = next, 0
			continue
		}
		p.rec = append(p.rec, line[pos:pos+i]...)
		pos += i + 1
		if pos < len(line) && line[pos] == '"' {
			p.rec = append(p.rec, '"')
			pos++
			continue
		}
		return span{start: start, end: len(p.rec), quoted: true}, line, pos, nil
	}
}

func (p *csvParser) collect() []csvField {
	p.fields = p.fields[:0]
	for _, s := range p.spans {
		p.fields = append(p.fields, csvField{b: p.rec[s.start:s.end], quoted: s.quoted})
	}
	return p.fields
}

// header reads the first record as column names (a UTF-8 BOM dropped).
func (p *csvParser) header() ([]string, error) {
	f, err := p.next()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty file: no header line")
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(f))
	for i, x := range f {
		names[i] = string(x.b)
	}
	if len(names) > 0 {
		names[0] = string(bytes.TrimPrefix([]byte(names[0]), []byte("\xef\xbb\xbf")))
	}
	p.single = len(names) == 1
	return names, nil
}
