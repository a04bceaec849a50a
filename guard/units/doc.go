// Package units reads and writes memory sizes for people: every message the
// guard shows goes through FormatBytes, and every size a user types through
// ParseSize. It imports nothing beyond the standard library, so any package
// can use it.
//
// Every suffix is a power of 1024, written any way: K, KB, KiB, k, kib all
// mean 1024 bytes, and G, GB and GiB all mean 2^30. That is how Docker
// (-m 4g), Slurm (--mem=4G) and the JVM (-Xmx4g) read them, and how people
// size RAM: someone who writes 16GB means the 16 GiB their machine shows,
// not 14.9 GiB. Output always uses the unambiguous KiB, MiB, GiB.
package units
