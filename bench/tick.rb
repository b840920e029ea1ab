# How long a busy Ruby thread keeps the GVL from a thread that ticks every
# millisecond: Ruby's timeslice, measured (docs/adapters.md). ruby bench/tick.rb
stop = false
w = Thread.new { x = 0; x += 1 until stop }
now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
longest = 0.0; last = now.(); t0 = last
while now.() - t0 < 2.0
  sleep 0.001
  t = now.(); longest = [longest, t - last].max; last = t
end
stop = true; w.join
puts format("Ruby: longest pause with a busy Ruby thread %.1f ms", longest * 1000)
