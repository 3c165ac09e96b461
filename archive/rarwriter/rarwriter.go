// Package rarwriter writes minimal store-only RAR 5 (and 4) archives for tests
// and the demo world: no RAR creator is available as free software, and
// third-party RAR files stay out of the repository. It supports directories, multi-volume archives
// (files may span volumes), the solid and encrypted-header markers needed to
// exercise readers, and nothing else (no compression, no encryption of
// data).
package rarwriter

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

// Signature4 is the RAR 1.5–4.x marker block.
var Signature4 = []byte("Rar!\x1a\x07\x00")

// block4 frames a RAR 4 header: CRC16 (low half of the CRC32 of the rest),
// type, flags, size, then the header data.
func block4(typ byte, flags uint16, data []byte) []byte {
	b := []byte{typ}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint16(b, uint16(7+len(data)))
	b = append(b, data...)
	return append(binary.LittleEndian.AppendUint16(nil, uint16(crc32.ChecksumIEEE(b))), b...)
}

func write4(files []File, opts Options) [][]byte {
	multi := opts.VolumeSize > 0
	var arcFlags uint16
	if multi {
		arcFlags |= 0x0001
	}
	if opts.Solid {
		arcFlags |= 0x0008
	}
	if !opts.OldNaming {
		arcFlags |= 0x0010
	}
	var vols [][]byte
	var cur []byte
	used := 0
	start := func() {
		cur = nil
		if len(vols) == 0 {
			cur = append(cur, opts.Prefix...)
		}
		cur = append(cur, Signature4...)
		cur = append(cur, block4(0x73, arcFlags, make([]byte, 6))...)
		used = 0
	}
	finish := func(notLast bool) {
		var f uint16
		if notLast {
			f = 1
		}
		cur = append(cur, block4(0x7b, f, nil)...)
		vols = append(vols, cur)
	}
	header := func(f File, n int, crc uint32, notFirst, notLast bool) []byte {
		flags := uint16(0x8000)
		if notFirst {
			flags |= 0x01
		}
		if notLast {
			flags |= 0x02
		}
		if f.Solid {
			flags |= 0x10
		}
		if f.Dir {
			flags |= 0xe0
		}
		d := binary.LittleEndian.AppendUint32(nil, uint32(n))
		d = binary.LittleEndian.AppendUint32(d, uint32(len(f.Data)))
		d = append(d, 2) // host OS: Windows
		d = binary.LittleEndian.AppendUint32(d, crc)
		d = binary.LittleEndian.AppendUint32(d, 0x58210000) // DOS time 2024-01-01
		d = append(d, 29, 0x30)                             // version 2.9, method store
		d = binary.LittleEndian.AppendUint16(d, uint16(len(f.Name)))
		attr := uint32(0x20)
		if f.Dir {
			attr = 0x10
		}
		d = binary.LittleEndian.AppendUint32(d, attr)
		d = append(d, f.Name...)
		return block4(0x74, flags, d)
	}
	start()
	for _, f := range files {
		crc := crc32.ChecksumIEEE(f.Data)
		data := f.Data
		first := true
		for {
			n := len(data)
			if multi && used+n > opts.VolumeSize && len(data) > 0 {
				n = min(max(opts.VolumeSize-used, 1), len(data))
			}
			notLast := n < len(data)
			cur = append(cur, header(f, n, crc, !first, notLast)...)
			cur = append(cur, data[:n]...)
			used += n
			data = data[n:]
			first = false
			if !notLast {
				break
			}
			finish(true)
			start()
		}
	}
	finish(false)
	return vols
}

// Signature is the RAR 5 marker block.
var Signature = []byte("Rar!\x1a\x07\x01\x00")

// File is one member to store.
type File struct {
	Name    string
	Data    []byte
	Dir     bool
	ModTime time.Time
	// Solid sets the solid flag in the file's compression info (the data is
	// still stored). Readers then treat the file as part of a solid stream.
	Solid bool
}

// Options shape the archive.
type Options struct {
	// VolumeSize > 0 splits the archive into volumes of about this many
	// data bytes each; a file's data may span volumes.
	VolumeSize int
	// Solid sets the archive's solid flag.
	Solid bool
	// Prefix is written before the signature of the first volume (an SFX
	// stub).
	Prefix []byte
	// EncryptedHeaders writes an archive encryption header, as RAR does
	// for "encrypt file names"; readers without a password must refuse.
	EncryptedHeaders bool
	// Version4 writes the RAR 1.5–4.x format instead of RAR 5.
	Version4 bool
	// OldNaming (Version4 only) clears the "new volume naming" flag, so
	// readers name volumes x.rar, x.r00, x.r01, … instead of x.partN.rar.
	OldNaming bool
}

func vint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// block frames a header: CRC32, size, then body (type, flags, …).
func block(body []byte) []byte {
	size := vint(nil, uint64(len(body)))
	crc := crc32.NewIEEE()
	crc.Write(size)
	crc.Write(body)
	out := binary.LittleEndian.AppendUint32(nil, crc.Sum32())
	out = append(out, size...)
	return append(out, body...)
}

func mainHeader(multi, solid bool, volNum int) []byte {
	var flags uint64
	if multi {
		flags |= 0x1
	}
	if volNum > 0 {
		flags |= 0x2
	}
	if solid {
		flags |= 0x4
	}
	b := vint(nil, 1) // type: main archive header
	b = vint(b, 0)    // header flags
	b = vint(b, flags)
	if volNum > 0 {
		b = vint(b, uint64(volNum))
	}
	return block(b)
}

func endHeader(notLast bool) []byte {
	b := vint(nil, 5)
	b = vint(b, 0)
	var f uint64
	if notLast {
		f = 1
	}
	return block(vint(b, f))
}

func fileHeader(f File, dataSize int, crc uint32, notFirst, notLast bool) []byte {
	var hflags uint64 = 0x2 // data area present
	if notFirst {
		hflags |= 0x8
	}
	if notLast {
		hflags |= 0x10
	}
	var fflags uint64 = 0x4 // CRC32 present
	if f.Dir {
		fflags |= 0x1
	}
	if !f.ModTime.IsZero() {
		fflags |= 0x2
	}
	b := vint(nil, 2) // type: file header
	b = vint(b, hflags)
	b = vint(b, uint64(dataSize))
	b = vint(b, fflags)
	b = vint(b, uint64(len(f.Data)))
	attr := uint64(0x20)
	if f.Dir {
		attr = 0x10
	}
	b = vint(b, attr)
	if !f.ModTime.IsZero() {
		b = binary.LittleEndian.AppendUint32(b, uint32(f.ModTime.Unix()))
	}
	b = binary.LittleEndian.AppendUint32(b, crc)
	var comp uint64 // version 0, method 0 (store)
	if f.Solid {
		comp |= 0x40
	}
	b = vint(b, comp)
	b = vint(b, 0) // host OS: Windows
	b = vint(b, uint64(len(f.Name)))
	b = append(b, f.Name...)
	return block(b)
}

// Write returns the archive's volumes (one for a single-volume archive).
func Write(files []File, opts Options) [][]byte {
	if opts.Version4 {
		return write4(files, opts)
	}
	multi := opts.VolumeSize > 0
	var vols [][]byte
	var cur []byte
	used := 0
	start := func() {
		cur = nil
		if len(vols) == 0 {
			cur = append(cur, opts.Prefix...)
		}
		cur = append(cur, Signature...)
		if opts.EncryptedHeaders {
			b := vint(nil, 4) // type: archive encryption header
			b = vint(b, 0)
			b = vint(b, 0) // encryption version
			b = vint(b, 0) // flags
			b = append(b, 15)
			b = append(b, make([]byte, 16)...) // salt
			cur = append(cur, block(b)...)
		}
		cur = append(cur, mainHeader(multi, opts.Solid, len(vols))...)
		used = 0
	}
	finish := func(notLast bool) {
		cur = append(cur, endHeader(notLast)...)
		vols = append(vols, cur)
	}
	start()
	for _, f := range files {
		crc := crc32.ChecksumIEEE(f.Data)
		data := f.Data
		first := true
		for {
			n := len(data)
			if multi && used+n > opts.VolumeSize && len(data) > 0 {
				n = max(opts.VolumeSize-used, 1)
				n = min(n, len(data))
			}
			notLast := n < len(data)
			cur = append(cur, fileHeader(f, n, crc, !first, notLast)...)
			cur = append(cur, data[:n]...)
			used += n
			data = data[n:]
			first = false
			if !notLast {
				break
			}
			finish(true)
			start()
		}
		if multi && used >= opts.VolumeSize {
			finish(true)
			start()
		}
	}
	finish(false)
	return vols
}
