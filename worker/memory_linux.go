package worker

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// TrimStartupMemory gives back what starting the process touched and
// will not touch again: the heap that package initialisation freed, and
// this process's mappings of the executable's pages that it read (the
// init functions of every package linked in, their tables, code that
// runs once): 30 to 40 MB of a web or worker process. Only read-only
// mappings are dropped, whose pages are the file's own and unmodified, so
// nothing is lost: a page needed again is mapped from the page cache on
// its first touch. The kernel would reclaim them itself under pressure,
// but until then they count in the process's resident size.
func TrimStartupMemory() { trim() }

func trim() {
	debug.FreeOSMemory()
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || string(f[5]) != exe || bytes.IndexByte(f[1], 'w') >= 0 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
