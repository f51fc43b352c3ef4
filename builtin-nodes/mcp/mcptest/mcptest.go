// Package mcptest provides an in-process MCP server for tests, built with the
// official Go SDK and reachable over both transports graphctl speaks: the
// streamable HTTP transport on 127.0.0.1 (StartHTTP) and stdio, by
// re-executing the test binary (Main in TestMain, StdioServer in a graph).
//
// Its tools:
//
//	echo        {text}            → the text
//	add         {a, b numbers}    → the sum, also as structured {sum}
//	get_weather {city}            → a deterministic report, structured {city, temperature_c, conditions}
//	fail        {message?}        → an MCP tool error result
//	barrier     {n}               → returns once n barrier calls are in flight at
//	                                the same time (to prove calls run concurrently)
//	whoami      {}                → the server's name (NewNamedServer), so that a
//	                                test can tell which of two servers answered
//	crash_once  {marker}          → the first call (no file at marker yet) creates
//	                                the file and kills the server process; later
//	                                calls answer "recovered" (stdio servers only)
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioEnv is the environment variable that makes Main serve on stdio.
const StdioEnv = "GRAPHCTL_MCPTEST_STDIO"

// NameEnv names the stdio server, as whoami reports it.
const NameEnv = "GRAPHCTL_MCPTEST_NAME"

// Tool names served by the test server.
var ToolNames = []string{"add", "barrier", "crash_once", "echo", "fail", "get_weather", "whoami"}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

// Weather is the structured result of get_weather.
type Weather struct {
	City         string `json:"city"`
	TemperatureC int    `json:"temperature_c"`
	Conditions   string `json:"conditions"`
}

type failIn struct {
	Message string `json:"message,omitempty" jsonschema:"the error message to report"`
}

type crashIn struct {
	Marker string `json:"marker" jsonschema:"a file path; the call crashes the server while it does not exist"`
}

type barrierIn struct {
	N int `json:"n" jsonschema:"how many calls must be in flight together"`
}

// ForecastFor returns the deterministic weather get_weather reports for a city.
func ForecastFor(city string) Weather {
	conditions := []string{"sunny", "cloudy", "rainy", "windy"}
	sum := 0
	for _, r := range city {
		sum += int(r)
	}
	return Weather{City: city, TemperatureC: 5 + sum%25, Conditions: conditions[sum%len(conditions)]}
}

// barrier releases its waiters once n of them are waiting.
type barrier struct {
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (b *barrier) wait(ctx context.Context, n int) (int, error) {
	b.mu.Lock()
	if b.release == nil {
		b.release = make(chan struct{})
	}
	b.waiting++
	got, ch := b.waiting, b.release
	if got >= n {
		close(b.release)
		b.release, b.waiting = nil, 0
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return got, nil
	case <-ctx.Done():
		return got, fmt.Errorf("barrier: %d of %d calls arrived: %w", got, n, ctx.Err())
	}
}

// NewServer returns a fresh MCP server with the test tools, named "mcptest".
func NewServer() *sdk.Server { return NewNamedServer("mcptest") }

// NewNamedServer returns a fresh MCP server with the test tools whose whoami
// tool answers name.
func NewNamedServer(name string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "graphctl-mcptest", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Returns the text it is given."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			sum := in.A + in.B
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.FormatFloat(sum, 'g', -1, 64)}}},
				addOut{Sum: sum}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "get_weather", Description: "Reports the current weather of a city."},
		func(_ context.Context, _ *sdk.CallToolRequest, in weatherIn) (*sdk.CallToolResult, Weather, error) {
			if in.City == "" {
				return nil, Weather{}, errors.New("city is required")
			}
			w := ForecastFor(in.City)
			text := fmt.Sprintf("%s: %d°C, %s", w.City, w.TemperatureC, w.Conditions)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, w, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always reports a tool error."},
		func(_ context.Context, _ *sdk.CallToolRequest, in failIn) (*sdk.CallToolResult, any, error) {
			msg := in.Message
			if msg == "" {
				msg = "the tool failed"
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Says which server answers."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash_once", Description: "Crashes the server on its first call."},
		func(_ context.Context, _ *sdk.CallToolRequest, in crashIn) (*sdk.CallToolResult, any, error) {
			if in.Marker == "" {
				return nil, nil, errors.New("marker is required")
			}
			if _, err := os.Stat(in.Marker); errors.Is(err, os.ErrNotExist) {
				if os.Getenv(StdioEnv) != "1" {
					return nil, nil, errors.New("crash_once crashes only a stdio server")
				}
				if err := os.WriteFile(in.Marker, []byte("crashed\n"), 0o600); err != nil {
					return nil, nil, err
				}
				os.Exit(3)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "recovered"}}}, nil, nil
		})
	b := &barrier{}
	sdk.AddTool(s, &sdk.Tool{Name: "barrier", Description: "Returns once n calls are in flight together."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in barrierIn) (*sdk.CallToolResult, any, error) {
			if in.N < 1 {
				return nil, nil, errors.New("n must be at least 1")
			}
			got, err := b.wait(ctx, in.N)
			if err != nil {
				return nil, nil, err
			}
			text := fmt.Sprintf("released as call %d of %d", got, in.N)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	return s
}

// StartHTTP serves a fresh test server over the streamable HTTP transport on
// 127.0.0.1 until the test ends, and returns its endpoint URL.
func StartHTTP(t testing.TB) string {
	t.Helper()
	return StartHTTPServer(t).URL
}

// StartHTTPServer is StartHTTP returning the httptest server, for tests that
// stop it to see a transport failure.
func StartHTTPServer(t testing.TB) *httptest.Server {
	t.Helper()
	return StartNamedHTTPServer(t, "mcptest")
}

// StartNamedHTTPServer is StartHTTPServer for a server whose whoami tool
// answers name.
func StartNamedHTTPServer(t testing.TB, name string) *httptest.Server {
	t.Helper()
	return ServeHTTP(t, NewNamedServer(name))
}

// ServeHTTP serves s over the streamable HTTP transport on 127.0.0.1 until
// the test ends, for tests that look at the server's sessions.
func ServeHTTP(t testing.TB, s *sdk.Server) *httptest.Server {
	t.Helper()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Main serves the test server on stdin/stdout and exits when StdioEnv is set;
// otherwise it returns at once. Call it first in TestMain.
func Main() {
	if os.Getenv(StdioEnv) != "1" {
		return
	}
	name := os.Getenv(NameEnv)
	if name == "" {
		name = "mcptest"
	}
	err := NewNamedServer(name).Run(context.Background(), &sdk.StdioTransport{})
	if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StdioServer returns the mcp_servers entry that starts the running test
// binary as a stdio server (its TestMain must call Main).
func StdioServer() map[string]any {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return map[string]any{
		"command": []any{exe, "-test.run=^$"},
		"env":     map[string]any{StdioEnv: "1"},
	}
}

// NamedStdioServer is StdioServer for a server whose whoami tool answers name.
func NamedStdioServer(name string) map[string]any {
	s := StdioServer()
	s["env"].(map[string]any)[NameEnv] = name
	return s
}

// HTTPServer returns the mcp_servers entry for an HTTP endpoint.
func HTTPServer(url string) map[string]any {
	return map[string]any{"url": url}
}
