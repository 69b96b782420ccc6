//go:build goexperiment.jsonv2 && go1.27

package fastjson

import (
	"bytes"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// With json/v2 built in (from Go 1.27), decoding takes about 40% less CPU
// than with sigs.k8s.io/json, whose decoder first validates the whole
// input in a separate pass.
var v2 = decoder{
	clean: func(data []byte, v any) bool { return jsonv2.Unmarshal(data, v, times) == nil },
	caseSensitive: func(data []byte, v any) error {
		return jsonv2.Unmarshal(data, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), times)
	},
	caseSensitiveRead: func(r io.Reader, v any) error {
		return jsonv2.UnmarshalRead(r, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), times)
	},
	caseSensitiveReadFleet: func(r io.Reader, v any) error {
		return jsonv2.UnmarshalRead(r, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), fleet)
	},
}

// times decodes a metav1.Time as its UnmarshalJSON method does (null is
// the zero time; a string is parsed as RFC 3339 and made local) without
// going through the method: json/v2 hands the method a copy of the value,
// which it decodes again with encoding/json's Unmarshal, and with a
// creation time, conditions and managedFields on every object that was a
// tenth of a fleet's Rollout decoding. Anything else (a number, an object)
// is left to the method, so its errors stay the method's own.
var times = jsonv2.WithUnmarshalers(timeUnmarshaler)

var timeUnmarshaler = jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.Time) error {
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		t.Time = time.Time{}
		return nil
	case '"':
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		s := raw[1 : len(raw)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			if s, err = jsontext.AppendUnquote(nil, raw); err != nil {
				return err
			}
		}
		pt, err := time.Parse(time.RFC3339, string(s))
		if err != nil {
			return err
		}
		t.Time = pt.Local()
		return nil
	}
	return errors.ErrUnsupported // json/v2: the next unmarshaler, here the method
})

// fleet is times, with managedFields and the last-applied-configuration
// annotation skipped and a pod spec kept to its containers' names and
// images: what is left out is still read through (and so checked to be
// JSON), not decoded. ReadValue, not SkipValue: SkipValue walks an array
// or object token by token through the decoder's state machine, ReadValue
// validates it in one pass over the bytes. A Rollout's managedFields are a
// third of its JSON; the lab's 1,000-Rollout list decoded 5–8% faster
// without them. The value ReadValue returns is not kept.
var fleet = jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
	jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *[]metav1.ManagedFieldsEntry) error {
		_, err := dec.ReadValue()
		return err
	}),
	jsonv2.UnmarshalFromFunc(stringMapWithoutLastApplied),
	jsonv2.UnmarshalFromFunc(podSpecImages),
	timeUnmarshaler,
))

// podSpecImages decodes of a pod spec its containers' names and images,
// which is all a fleet scan reads of a Rollout's pod template (it matches
// a template to its ReplicaSet by them), into the spec there is: a
// production template's env, probes, resources, volumes and affinity
// made half of a Rollout list's decoding time and three quarters of its
// allocations (BenchmarkFleetRollouts in pkg/gather). Every other field is read
// through, not decoded; a name or image that is not a string is an error,
// as it is to json/v2. Anything but an object (null) is left to json/v2.
func podSpecImages(dec *jsontext.Decoder, s *corev1.PodSpec) error {
	if dec.PeekKind() != '{' {
		return errors.ErrUnsupported
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if !nameIs(name, "containers") {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if s.Containers, err = containerImages(dec); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// nameIs reports whether raw, an object member's name as ReadValue gives
// it, is name: compared in place (a Token's String would copy every name
// a pod spec has), unquoted first only when it is escaped.
func nameIs(raw jsontext.Value, name string) bool {
	if len(raw) < 2 {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == name
	}
	u, err := jsontext.AppendUnquote(nil, raw)
	return err == nil && string(u) == name
}

// containerImages reads a containers array (or null) keeping each
// container's name and image.
func containerImages(dec *jsontext.Decoder) ([]corev1.Container, error) {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '[':
	default:
		return nil, notA(dec, "containers", "an array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	out := []corev1.Container{}
	for dec.PeekKind() != ']' {
		c, err := containerImage(dec)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	_, err := dec.ReadToken()
	return out, err
}

// containerImage reads one container (null is a zero one, as json/v2
// makes it) keeping its name and image.
func containerImage(dec *jsontext.Decoder) (corev1.Container, error) {
	var c corev1.Container
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return c, err
	case '{':
	default:
		return c, notA(dec, "a container", "an object")
	}
	if _, err := dec.ReadToken(); err != nil {
		return c, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return c, err
		}
		var to *string
		var field string
		switch {
		case nameIs(name, "name"):
			to, field = &c.Name, "name"
		case nameIs(name, "image"):
			to, field = &c.Image, "image"
		default:
			if err := dec.SkipValue(); err != nil {
				return c, err
			}
			continue
		}
		switch dec.PeekKind() {
		case 'n':
			*to = ""
		case '"':
		default:
			return c, notA(dec, "a container's "+field, "a string")
		}
		v, err := dec.ReadToken()
		if err != nil {
			return c, err
		}
		if v.Kind() == '"' {
			*to = v.String()
		}
	}
	_, err := dec.ReadToken()
	return c, err
}

// notA reads the value at hand through (a syntax error in it is the
// error) and says that what was read is not the kind wanted.
func notA(dec *jsontext.Decoder, what, want string) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return fmt.Errorf("%s: %s is not %s", what, v.Kind(), want)
}

// stringMapWithoutLastApplied decodes a map[string]string as json/v2 does
// (into the map there is, or a new one; a null value is ""; a repeated
// name's last value kept, as the decoder's options allow) except that
// corev1.LastAppliedConfigAnnotation is skipped: kubectl apply (and Argo
// CD's default sync, which applies the same way) writes the whole manifest
// there as one escaped JSON string, as large as the spec. Only an
// annotation has that name. Anything but an object is left to json/v2.
func stringMapWithoutLastApplied(dec *jsontext.Decoder, m *map[string]string) error {
	if dec.PeekKind() != '{' {
		return errors.ErrUnsupported
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if *m == nil {
		*m = map[string]string{}
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		k := name.String()
		switch dec.PeekKind() {
		case '"', 'n':
			if k == corev1.LastAppliedConfigAnnotation {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				continue
			}
			v, err := dec.ReadToken()
			if err != nil {
				return err
			}
			if v.Kind() == 'n' {
				(*m)[k] = ""
			} else {
				(*m)[k] = v.String()
			}
		default:
			return fmt.Errorf("the value of %q is not a string", k)
		}
	}
	_, err := dec.ReadToken()
	return err
}

var (
	best = v2
	// decoders are both, so that one test run checks that they agree.
	decoders = map[string]decoder{"encoding/json/v2": v2, "sigs.k8s.io/json": sigs}
)
