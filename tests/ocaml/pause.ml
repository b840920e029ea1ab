(* oneAPI.jl's GC-stall test in OCaml (systhreads): a thread waits 1 s in
   the toy driver through the layer while holding the master lock, as a
   naive binding does; the main thread ticks every millisecond and keeps
   the longest gap. usage: pause MODE EXPECT [STALLS]
     MODE   none | detect | active   (the adapter the binding switches on)
     EXPECT stall | no-stall | signal
     STALLS how many stalls callguard must have reported (default 0)
   signal: a signal handler that raises is pending when the guarded call
   leaves the runtime; the call must complete and the exception come after. *)

external adapter : int -> unit = "cg_ml_adapter"
external wait : int -> unit = "cg_ml_wait"
external wait_signal_pending : int -> int = "cg_ml_wait_signal_pending"
external holds : unit -> bool = "cg_ml_holds"
external holds_on_c_thread : unit -> bool = "cg_ml_holds_on_c_thread"
external stats : string -> int * int * int * int = "cg_ml_stats"
external now : unit -> float = "cg_ml_now"

exception Signalled

let fail fmt = Printf.ksprintf (fun s -> prerr_endline s; exit 1) fmt

let signal_test () =
  Sys.set_signal Sys.sigusr1 (Sys.Signal_handle (fun _ -> raise Signalled));
  let result = ref (-1) in
  let raised =
    try
      result := wait_signal_pending 20;
      (* the next poll (an allocation) runs the pending handler *)
      for _ = 1 to 1000 do ignore (Sys.opaque_identity (ref 0)) done;
      Thread.yield ();
      false
    with Signalled -> true
  in
  let calls, _, _, _ = stats "toyWait" in
  Printf.printf "toyWait returned %d, %d call(s), handler raised after: %b\n" !result calls raised;
  if !result <> 0 || calls <> 1 then fail "the guarded call did not complete (result %d, %d calls)" !result calls;
  if not raised then fail "the pending signal's handler did not run after the call"

(* The CALLGUARD_* variables this run inherited: one of them (a stall limit,
   a policy) changes what is counted. *)
let callguard_env () =
  Array.to_list (Unix.environment ())
  |> List.filter (fun v -> String.length v > 10 && String.sub v 0 10 = "CALLGUARD_")
  |> String.concat " "

let pause_test mode expect want_stalls =
  let finished = ref false in
  (* What the waiting thread saw, for the message of a failure: holds()
     around the wait, when the wait began and how long it took. *)
  let held_before = ref false and held_after = ref false in
  let wait_start = ref 0.0 and wait_ms = ref 0.0 in
  let worker =
    Thread.create
      (fun () ->
        Thread.delay 0.2;
        held_before := holds ();
        let t0 = now () in
        wait 1000;
        wait_ms := (now () -. t0) *. 1000.0;
        wait_start := t0;
        held_after := holds ();
        finished := true)
      ()
  in
  let longest = ref 0.0 and longest_from = ref 0.0 and last = ref (now ()) in
  while not !finished do
    Thread.delay 0.001;
    let t = now () in
    if t -. !last > !longest then (longest := t -. !last; longest_from := !last);
    last := t
  done;
  Thread.join worker;
  let ms = !longest *. 1000.0 in
  let calls, stalls, max_ns, stall_ns = stats "toyWait" in
  let said held = if mode = "none" then "(no adapter)" else string_of_bool held in
  Printf.printf "longest pause %.1f ms, %d stall(s) reported\n" ms stalls;
  let seen =
    Printf.sprintf
      "the longest pause began %+.1f ms from the start of the wait, which took %.1f ms, holds() %s before it and %s after; \
       toyWait: %d call(s), %d stall(s), longest call %.1f ms, stall time %.1f ms; CALLGUARD_* set: [%s]"
      ((!longest_from -. !wait_start) *. 1000.0) !wait_ms (said !held_before) (said !held_after) calls stalls
      (float max_ns /. 1e6) (float stall_ns /. 1e6) (callguard_env ())
  in
  print_endline seen;
  (match expect with
   | "stall" -> if ms < 800.0 then fail "expected a stall of about 1 s, longest pause %.1f ms (%s)" ms seen
   | _ -> if ms > 50.0 then fail "expected pauses of at most 50 ms, saw %.1f ms (%s)" ms seen);
  if stalls <> want_stalls then fail "expected %d stall(s) reported, got %d (%s)" want_stalls stalls seen

let () =
  let mode = Sys.argv.(1) and expect = Sys.argv.(2) in
  adapter (match mode with "none" -> 0 | "detect" -> 1 | _ -> 2);
  if mode <> "none" && not (holds ()) then fail "holds() is false in a stub";
  let off_thread = ref true in
  let t = Thread.create (fun () -> off_thread := holds ()) () in
  Thread.join t;
  if mode <> "none" && not !off_thread then fail "holds() is false on a Thread.create thread";
  if holds_on_c_thread () then fail "holds() is true on a thread OCaml does not know";
  let want_stalls = if Array.length Sys.argv > 3 then int_of_string Sys.argv.(3) else 0 in
  if expect = "signal" then signal_test () else pause_test mode expect want_stalls
