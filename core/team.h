/* Internal: optic's own fork-join thread team, and the wait primitives it
 * and the runtime's barrier (exec/barrier.h) share.
 *
 * Why not an OpenMP parallel region: libgomp's idle threads wait for the
 * next region, and the region's master waits for its team, by spinning for
 * GOMP_SPINCOUNT iterations (milliseconds) before they sleep. On a machine
 * whose cores other processes share, a spinning thread takes the time slice
 * the thread it waits for needs (an MLP training step at 2 threads ran 10x
 * slower than at 1 thread next to one busy process). That policy is only
 * settable through the environment, before the process starts; a library
 * cannot choose it. A team's waits spin for a short, bounded, adaptive while
 * (a pause instruction per poll), then sleep on a futex (Linux; sched_yield
 * elsewhere), and do not spin at all when the thread they wait for last ran
 * on the waiter's own CPU (it cannot run while the waiter spins).
 *
 * Memory ordering: everything the caller wrote before optic_team_run is
 * visible to fn on every thread, and everything fn wrote on any thread is
 * visible to the caller after optic_team_run returns.
 *
 * Threads: a team starts its worker threads at its first run that asks for
 * more than one thread (the caller is thread 0), keeps them, sleeping
 * between runs, and joins them in optic_team_destroy. Workers block every
 * signal (the process's handlers run on its own threads). Depends on libc
 * and pthreads only. */
#ifndef OPTIC_CORE_TEAM_H
#define OPTIC_CORE_TEAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The most threads a team runs (the caller included). */
#define OPTIC_TEAM_MAX 64
/* The longest a team's wait spins before it sleeps (nanoseconds); the
 * budget adapts down to OPTIC_TEAM_SPIN_MIN_NS: it halves when a wait had to
 * sleep anyway, doubles when the spin saw the awaited change. */
#ifndef OPTIC_TEAM_SPIN_NS
#define OPTIC_TEAM_SPIN_NS 20000
#endif
#ifndef OPTIC_TEAM_SPIN_MIN_NS
#define OPTIC_TEAM_SPIN_MIN_NS 1000
#endif

/* ---- wait primitives ---- */

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t optic_wait_now_ns(void);
/* Online CPUs (read once, then cached). */
long optic_wait_online_cpus(void);
/* The CPU the calling thread runs on (-1: not known). */
int optic_wait_current_cpu(void);
/* One polling pause (x86: pause; arm64: isb). */
void optic_wait_pause(void);
/* Sleeps while *word == expected (may return early: callers re-check). */
void optic_wait_sleep(atomic_uint *word, unsigned expected);
/* Wakes every thread sleeping on word. */
void optic_wait_wake_all(atomic_uint *word);
/* Spins while *word == expected for at most *budget_ns (0: not at all),
 * adapting *budget_ns within [min_ns, max_ns]. Returns true when the word
 * changed during the spin (acquire), false when the caller must sleep. */
bool optic_wait_spin(atomic_uint *word, unsigned expected, atomic_uint *budget_ns, unsigned min_ns, unsigned max_ns);

/* ---- the team ---- */

typedef struct optic_team optic_team;
/* The work of thread t of nt (0 <= t < nt; t == 0 is the caller). */
typedef void (*optic_team_fn)(void *arg, int t, int nt);

/* A team with no threads yet; NULL when out of memory. */
optic_team *optic_team_create(void);
/* Stops and joins the workers, frees the team. NULL-safe. Not concurrent
 * with a run on the same team. */
void optic_team_destroy(optic_team *tm);
/* Runs fn(arg, t, n) on n threads at once, t = 0 on the calling thread, and
 * returns n once every thread's fn has returned. n is nt capped at
 * OPTIC_TEAM_MAX and at the workers the system let the team start, plus one;
 * a call from inside a run of the same team (or concurrent with one) runs
 * fn(arg, 0, 1) on the caller alone. nt <= 1: fn(arg, 0, 1) on the caller,
 * no thread involved. Never fails. */
int optic_team_run(optic_team *tm, int nt, optic_team_fn fn, void *arg);
/* Starts the workers a run of nt threads needs (when not yet started) and
 * returns the threads such a run gets: what optic_team_run(tm, nt, ...)
 * returns next unless it is nested in or concurrent with another run (then
 * 1). Callers size per-run structures (a barrier) with it. Never fails. */
int optic_team_prepare(optic_team *tm, int nt);
/* The process's shared teams: acquire lends the team released last (its
 * workers, if any, are the likeliest to be still spinning, so a run right
 * after another one, by any caller, finds them awake), or a new team when
 * every team is lent out (NULL when out of memory); release gives it back.
 * Thread-safe. Shared teams and their sleeping workers live until the
 * process exits; a child of fork() starts with no shared team (a team lent
 * out across a fork must not be run in the child). Callers that run back to back (the runtime's runs, the
 * optimizer's steps) share them, so a training step does not wake a
 * sleeping team for each of its parts. */
optic_team *optic_team_acquire(void);
/* As optic_team_acquire, for a run of nt threads: a run with more threads
 * than CPUs gets a team that already has that many, a run that fits the
 * CPUs never gets such a team (it would never spin). */
optic_team *optic_team_acquire_for(int nt);
void optic_team_release(optic_team *tm);
/* Runs that slept at once instead of spinning because the awaited thread
 * shared the waiter's CPU (tests). */
unsigned optic_team_spins_skipped(const optic_team *tm);

#endif
