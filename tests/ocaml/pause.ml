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
external stats : string -> int * int = "cg_ml_stats"

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
  let calls, _ = stats "toyWait" in
  Printf.printf "toyWait returned %d, %d call(s), handler raised after: %b\n" !result calls raised;
  if !result <> 0 || calls <> 1 then fail "the guarded call did not complete (result %d, %d calls)" !result calls;
  if not raised then fail "the pending signal's handler did not run after the call"

let pause_test expect want_stalls =
  let finished = ref false in
  let worker = Thread.create (fun () -> Thread.delay 0.2; wait 1000; finished := true) () in
  let longest = ref 0.0 and last = ref (Unix.gettimeofday ()) in
  while not !finished do
    Thread.delay 0.001;
    let now = Unix.gettimeofday () in
    if now -. !last > !longest then longest := now -. !last;
    last := now
  done;
  Thread.join worker;
  let ms = !longest *. 1000.0 in
  let _, stalls = stats "toyWait" in
  Printf.printf "longest pause %.1f ms, %d stall(s) reported\n" ms stalls;
  (match expect with
   | "stall" -> if ms < 800.0 then fail "expected a stall of about 1 s, longest pause %.1f ms" ms
   | _ -> if ms > 50.0 then fail "expected pauses of at most 50 ms, saw %.1f ms" ms);
  if stalls <> want_stalls then fail "expected %d stall(s) reported, got %d" want_stalls stalls

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
  if expect = "signal" then signal_test () else pause_test expect want_stalls
