#!/usr/bin/env bash
# A one-node Slurm cluster for the launcher suite and benchmarks (shared/cluster/SLURM.md's recipe): munged, slurmctld
# and slurmd as root, every file under one scratch folder. Run it inside the network namespace the tests use, so the
# jobs (and the agents they start) share its loopback-only network.
#   scripts/slurm-cluster.sh start DIR   start and wait until the node is idle; prints `export SLURM_CONF=…`
#   scripts/slurm-cluster.sh stop DIR    stop the three daemons by their pid files
set -euo pipefail
cmd=${1:?start|stop}
S=$(realpath -m "${2:?scratch folder}")

start() {
  for program in munged slurmctld slurmd sbatch squeue scancel; do
    command -v "$program" >/dev/null || { echo "slurm-cluster: $program not found (apt-get install slurm-wlm munge)" >&2; exit 3; }
  done
  mkdir -p "$S"/{state,spool,run,log,munge,etc}
  # munged runs as munge: it must be able to walk to its socket (a mkdtemp folder is 0700).
  chmod 755 "$S"
  chown munge:munge "$S/munge"
  chmod 755 "$S/munge"
  [ -s /etc/munge/munge.key ] || { echo "slurm-cluster: /etc/munge/munge.key is missing (the munge package creates it)" >&2; exit 3; }
  # The daemons fork away: their stdio must not hold the caller's pipes open.
  setpriv --reuid=munge --regid=munge --clear-groups munged --socket="$S/munge/munge.socket.2" \
    --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" --seed-file="$S/munge/munged.seed" </dev/null >/dev/null 2>&1
  local cpus mem
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
  mkdir -p "$S/cgroup"
  cat > "$S/etc/slurm.conf" <<CONF
ClusterName=caesar-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket.2
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/cgroup
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$S/log/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n' > "$S/etc/cgroup.conf"
  export SLURM_CONF="$S/etc/slurm.conf"
  slurmctld -f "$SLURM_CONF" </dev/null >/dev/null 2>&1
  for _ in $(seq 1 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
  slurmd -f "$SLURM_CONF" -N localhost </dev/null >/dev/null 2>&1
  for _ in $(seq 1 200); do [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.1; done
  [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] || { echo "slurm-cluster: the node did not become idle; logs in $S/log" >&2; tail -n 20 "$S"/log/*.log >&2; exit 1; }
  echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
  for pidfile in "$S/run/slurmd.pid" "$S/run/slurmctld.pid" "$S/munge/munged.pid"; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    alive=0
    for pidfile in "$S/run/slurmd.pid" "$S/run/slurmctld.pid" "$S/munge/munged.pid"; do
      [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.1
  done
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
