package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"testing"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func multipartBody(t *testing.T, fields map[string]string, file []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if file != nil {
		fw, err := w.CreateFormFile("file", "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}
