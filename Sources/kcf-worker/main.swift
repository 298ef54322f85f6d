// kcf-worker: a child process for multi-process tests and crash trials. It opens a keychain file and runs
// one command against it; the password comes from the environment (KCF_WORKER_PASSWORD), never from argv.
//
// Usage:
//   kcf-worker add PATH PREFIX N             adds N generic passwords (service "worker", account "PREFIX-i")
//   kcf-worker compact-loop PATH N           compacts N times
//   kcf-worker read-loop PATH N              N rounds of statistics and finds of existing worker items
//   kcf-worker update-loop PATH PREFIX N     N updates of the secrets of existing "PREFIX-…" items
//   kcf-worker churn PATH PREFIX N           N adds of "PREFIX-i"; after every third, deletes the one before
//   kcf-worker rotate-loop PATH N            N master key rotations, keeping the password, adding "rotation-i"
//   kcf-worker scan-loop PATH STOPFILE       listings of the worker items until the file STOPFILE exists
//   kcf-worker chaos PATH SEED N             N seeded random adds, updates, deletes, batches, compactions and
//                                            credential changes between KCF_WORKER_PASSWORD and
//                                            KCF_WORKER_PASSWORD2, each announced before and acknowledged
//                                            after (ChaosOperation.swift), for the crash trials
//
// Every acknowledged step prints one line to stdout, flushed at once (see WorkerOutput.swift), so that a
// parent that kills the worker knows what was acknowledged before. Exit status: 0 success, 1 usage error,
// 2 keychain error (printed to stderr), 3 a check failed (what was read is not what was written).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

exit(WorkerCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
