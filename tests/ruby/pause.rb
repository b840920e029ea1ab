# oneAPI.jl's GC-stall test in Ruby: a thread waits 1 s in the toy driver
# through the layer while holding the GVL, as a naive extension does; the
# main thread ticks every millisecond and keeps the longest gap.
# usage: ruby pause.rb EXT_DIR MODE EXPECT [STALLS]
#   MODE   none | detect | active   (the adapter the binding switches on)
#   EXPECT stall | no-stall | signal | refused
#   STALLS how many stalls callguard must have reported (default 0)
# signal: a trap that raises is pending when the guarded call leaves the
# GVL; the call must complete (with the GVL held) and the exception come after.
# refused: the waiting thread first spins 300 ms in C with the GVL held, so
# Ruby posts its thread-switch interrupt to it; the adapter then finds an
# interrupt pending and makes the call with the GVL held: the whole wait is a
# pause (what Ruby allows without processing the interrupt, which may raise),
# and callguard must report it as a stall.
$LOAD_PATH.unshift(ARGV[0])
require "cgtoyrb"

mode, expect, want_stalls = ARGV[1], ARGV[2], (ARGV[3] || "0").to_i
def fail(msg) = (warn msg; exit 1)
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

CgToy.adapter(mode)
if mode != "none"
  fail "holds() is false in a method" unless CgToy.holds
  fail "holds() is false on a Ruby thread" unless Thread.new { CgToy.holds }.value
  fail "holds() is true on a thread Ruby does not know" if CgToy.holds_on_c_thread
end

if expect == "signal"
  class Signalled < StandardError; end
  trap("USR1") { raise Signalled }
  raised = begin
    CgToy.wait_signal_pending(20) # the trap runs when it returns
    sleep 0.05
    false
  rescue Signalled
    true
  end
  result = CgToy.last_result
  calls = CgToy.stats("toyWait")[0]
  puts "toyWait returned #{result.inspect}, #{calls} call(s), trap raised after: #{raised}"
  fail "the guarded call did not complete" unless result == 0 && calls == 1
  fail "the pending trap did not run after the call" unless raised
  exit 0
end

finished = false
# What the waiting thread saw, for the message of a failure: holds() around
# the wait, when the wait began and how long it took.
seen_by_worker = {}
worker = Thread.new do
  sleep 0.2
  seen_by_worker[:before] = CgToy.holds
  t0 = now
  if expect == "refused"
    CgToy.spin_then_wait(300, 1000)
  else
    CgToy.wait(1000)
  end
  seen_by_worker.update(ms: (now - t0) * 1000, start: t0, after: CgToy.holds)
  finished = true
end
longest = 0.0
longest_from = last = now
until finished
  sleep 0.001
  t = now
  longest, longest_from = t - last, last if t - last > longest
  last = t
end
worker.join
ms = longest * 1000
calls, stalls, max_ns, stall_ns = CgToy.stats("toyWait")
puts format("longest pause %.1f ms, %d stall(s) reported", ms, stalls)
# CALLGUARD_* variables inherited by this run change what is counted (a stall limit, a policy).
cg_env = ENV.select { |k, _| k.start_with?("CALLGUARD_") }.map { |k, v| "#{k}=#{v}" }.join(" ")
seen = format("the longest pause began %+.1f ms from the start of the wait, which took %.1f ms, " \
              "holds() %s before it and %s after; toyWait: %d call(s), %d stall(s), longest call %.1f ms, " \
              "stall time %.1f ms; CALLGUARD_* set: [%s]",
              (longest_from - seen_by_worker[:start]) * 1000, seen_by_worker[:ms], seen_by_worker[:before],
              seen_by_worker[:after], calls, stalls, max_ns / 1e6, stall_ns / 1e6, cg_env)
puts seen
if expect == "stall" || expect == "refused"
  fail format("expected a stall of about 1 s, longest pause %.1f ms (%s)", ms, seen) if ms < 800
elsif ms > 50
  fail format("expected pauses of at most 50 ms, saw %.1f ms (%s)", ms, seen)
end
fail "expected #{want_stalls} stall(s) reported, got #{stalls} (#{seen})" unless stalls == want_stalls
