// Package archive holds the byte-level rules of ingestion: which files are
// candidates and of which type, how multi-part sets are formed, how archives
// are listed without extraction, how a preview is chosen and extracted, how a
// download is hashed while it is written, how a large file is split into byte
// ranges, and how a package's creator is derived from names.
//
// The package is pure: it imports only the standard library and the archive
// libraries (archive/zip, nwaples/rardecode/v2, bodgit/sevenzip). It never
// writes an archive's entry names to disk, bounds every listing and
// extraction (entry count, dictionary size, byte and time budgets) and turns
// panics of third-party decoders into notes or errors, because every archive
// it sees is untrusted input.
package archive
