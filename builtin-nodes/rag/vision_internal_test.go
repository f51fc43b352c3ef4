package rag

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func TestImageBytesAndPart(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	raw := base64.StdEncoding.EncodeToString(png)
	tests := []struct {
		name     string
		img      string
		urls     bool
		wantMIME string
		wantURL  string // the image URL part's URL, or "" for a binary part
		wantErr  string
	}{
		{name: "http url", img: "https://example.com/a.png", wantURL: "https://example.com/a.png"},
		{name: "data url, binary model", img: "data:image/png;base64," + raw, wantMIME: "image/png"},
		{name: "data url, url model", img: "data:image/png;base64," + raw, urls: true, wantMIME: "image/png",
			wantURL: "data:image/png;base64," + raw},
		{name: "raw base64 is sniffed", img: raw, wantMIME: "image/png"},
		{name: "raw base64, url model gets a data url", img: raw, urls: true, wantMIME: "image/png",
			wantURL: "data:image/png;base64," + raw},
		{name: "text is not an image", img: base64.StdEncoding.EncodeToString([]byte("hello, world")), wantErr: "not an image"},
		{name: "not base64", img: "not base64!", wantErr: "neither a URL nor valid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, mime, err := ImageBytes(tt.img)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mime != tt.wantMIME {
				t.Errorf("mime %q, want %q", mime, tt.wantMIME)
			}
			switch p := imagePart(tt.img, data, mime, tt.urls).(type) {
			case llms.ImageURLContent:
				if p.URL != tt.wantURL {
					t.Errorf("image URL %.60q, want %.60q", p.URL, tt.wantURL)
				}
			case llms.BinaryContent:
				if tt.wantURL != "" {
					t.Errorf("binary part, want the URL %.60q", tt.wantURL)
				}
				if p.MIMEType != tt.wantMIME || string(p.Data) != string(data) {
					t.Errorf("binary part %s of %d bytes, want %s", p.MIMEType, len(p.Data), tt.wantMIME)
				}
			default:
				t.Errorf("part %T", p)
			}
		})
	}
}
