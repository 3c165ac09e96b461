// Package mesh reads 3D models (STL binary and ASCII, OBJ, 3MF) and renders
// a thumbnail of them: shaded, auto-framed, from one fixed three-quarter
// view, the same look for every model. It is what a package of models shows
// when it has no picture of its own.
//
// Every model is untrusted input read through an io.ReaderAt, never whole
// into memory. Rendering streams the triangles twice (once to frame them,
// once to draw them) into a fixed-size z-buffer, so a 10-million-triangle
// STL costs the framebuffer and a read buffer, not its triangles; OBJ
// vertices and 3MF meshes, which faces refer to by index, are held in memory
// up to Options.MaxMeshBytes. Every triangle is drawn: dropping some to
// save time leaves holes in the surface in the same proportion, whatever
// the model's density, so a model over Options.MaxTriangles is refused
// instead (with the default and the input size bound, no STL reaches it).
// Every loop checks the context, a render has a deadline of its own
// (Options.MaxDuration), and a panic inside the package becomes an error:
// a hostile model cannot hang, exhaust or crash the worker.
//
// The package is pure: it imports only the standard library.
package mesh
