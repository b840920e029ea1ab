(* How long a busy OCaml thread keeps the master lock from a thread that ticks
   every millisecond: the systhreads tick, measured (docs/adapters.md).
   ocamlopt -I +threads unix.cmxa threads.cmxa bench/tick.ml -o /tmp/tick && /tmp/tick *)
let () =
  let stop = ref false in
  let w = Thread.create (fun () -> let l = ref [] in while not !stop do l := [1]; ignore (Sys.opaque_identity !l) done) () in
  let longest = ref 0.0 and last = ref (Unix.gettimeofday ()) and t0 = Unix.gettimeofday () in
  while Unix.gettimeofday () -. t0 < 2.0 do
    Thread.delay 0.001;
    let now = Unix.gettimeofday () in
    if now -. !last > !longest then longest := now -. !last;
    last := now
  done;
  stop := true; Thread.join w;
  Printf.printf "OCaml: longest pause with a busy OCaml thread %.1f ms\n" (!longest *. 1000.)
