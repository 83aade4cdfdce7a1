// Transparent huge pages for the simulator's memory. A large fabric's packets, ports, queues and route
// tables are spread over tens of megabytes, touched in no useful order: with 4 KiB pages most packet-hops
// miss the TLB (a page walk costs more still under a hypervisor). Where the kernel gives huge pages on
// request (THP "madvise" or "always"), use_huge_pages() lets the allocator take them for the main heap.
#pragma once

namespace rocesim {

// Call once, at the start of main, before the simulation allocates: makes the main heap grow in large
// steps, keeps large blocks on it (not in mappings of their own), and asks for huge pages over the heap's
// reserve (address space only: memory is taken as it is touched, in 2 MiB pages). Does nothing where
// unsupported. Only the layout of memory changes, never a result.
void use_huge_pages();

}  // namespace rocesim
