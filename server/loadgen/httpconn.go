package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// runConn is one load client's keep-alive HTTP/1.1 connection to a server:
// it writes each request with one write and reads each response in full,
// without the goroutines, header maps and request objects of net/http's
// client, so that the clients take little of the CPU they share with the
// server they measure. It serves plain http:// URLs.
type runConn struct {
	addr, host, auth string
	conn             net.Conn
	br               *bufio.Reader
	req              []byte
}

// requestTimeout bounds one request on a runConn.
const requestTimeout = 2 * time.Minute

// newRunConn returns a connection (dialled on first use) to the server at
// base, an http:// URL.
func newRunConn(base, apiKey string) (*runConn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", base, err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: the load clients speak plain http://", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	k := &runConn{addr: addr, host: u.Host}
	if apiKey != "" {
		k.auth = "Authorization: Bearer " + apiKey + "\r\n"
	}
	return k, nil
}

// Close closes the connection.
func (k *runConn) Close() {
	if k.conn != nil {
		k.conn.Close()
		k.conn = nil
	}
}

// post sends a POST of a JSON body to path and reads the response's body
// into out, returning its status code. A connection that fails is closed;
// the next request dials again.
func (k *runConn) post(ctx context.Context, path string, body []byte, out *bytes.Buffer) (int, error) {
	if k.conn == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", k.addr)
		if err != nil {
			return 0, fmt.Errorf("POST %s: %w", path, err)
		}
		k.conn = c
		if k.br == nil {
			k.br = bufio.NewReaderSize(c, 16<<10)
		} else {
			k.br.Reset(c)
		}
	}
	status, keep, err := k.roundTrip(path, body, out)
	if err != nil || !keep {
		k.Close()
	}
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", path, err)
	}
	return status, nil
}

func (k *runConn) roundTrip(path string, body []byte, out *bytes.Buffer) (status int, keep bool, err error) {
	if err := k.conn.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		return 0, false, err
	}
	req := append(k.req[:0], "POST "...)
	req = append(req, path...)
	req = append(req, " HTTP/1.1\r\nHost: "...)
	req = append(req, k.host...)
	req = append(req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	req = strconv.AppendInt(req, int64(len(body)), 10)
	req = append(req, "\r\n"...)
	req = append(req, k.auth...)
	req = append(req, "\r\n"...)
	req = append(req, body...)
	k.req = req
	if _, err := k.conn.Write(req); err != nil {
		return 0, false, err
	}
	return k.readResponse(out)
}

// readResponse reads a response: its status line, its headers (of which
// Content-Length, Transfer-Encoding and Connection count) and its whole
// body into out.
func (k *runConn) readResponse(out *bytes.Buffer) (status int, keep bool, err error) {
	line, err := k.br.ReadSlice('\n')
	if err != nil {
		return 0, false, fmt.Errorf("read the status line: %w", err)
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	keep = line[7] == '1'
	length, chunked := int64(-1), false
	for {
		line, err := k.br.ReadSlice('\n')
		if err != nil {
			return 0, false, fmt.Errorf("read the headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("malformed header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return 0, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case asciiEqualFold(name, "Transfer-Encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "Connection"):
			if asciiEqualFold(value, "close") {
				keep = false
			}
		}
	}
	out.Reset()
	switch {
	case chunked:
		err = k.readChunked(out)
	case length >= 0:
		err = readN(out, k.br, int(length))
	default:
		// The body ends with the connection.
		keep = false
		_, err = out.ReadFrom(k.br)
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the body: %w", err)
	}
	return status, keep, nil
}

// readChunked reads a chunked body and its trailer.
func (k *runConn) readChunked(out *bytes.Buffer) error {
	for {
		line, err := k.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed chunk size %q", line)
		}
		if n == 0 {
			for { // the trailer, up to its empty line
				line, err := k.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if err := readN(out, k.br, int(n)); err != nil {
			return err
		}
		if crlf, err := k.br.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return errors.New("malformed chunk end")
		}
	}
}

// readN appends the next n bytes of r to out.
func readN(out *bytes.Buffer, r io.Reader, n int) error {
	out.Grow(n)
	b := out.AvailableBuffer()[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	out.Write(b)
	return nil
}

// asciiEqualFold reports whether b is s without regard to ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
