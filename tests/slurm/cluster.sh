#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the Slurm executor's test:
# munged, slurmctld and slurmd with two partitions ("hopper" and "blackwell")
# that stand for two kinds of GPU node, each offering 2 count-only "gpu"
# generic resources, so `--gres=gpu:1` is scheduled as on a GPU cluster.
#
#   cluster.sh start DIR   writes DIR/etc/slurm.conf, starts the daemons, waits
#                          until the node is idle; prints the SLURM_CONF to use
#   cluster.sh stop DIR    stops what start started (by the pid files in DIR)
#
# Needs root and Debian's slurm-wlm and munge (scripts/setup.sh installs them).
set -euo pipefail
cmd=${1:?usage: cluster.sh start|stop DIR}
dir=${2:?usage: cluster.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
node=$(hostname -s)

stop() {
  for d in slurmd slurmctld munged; do
    if [[ -s $dir/run/$d.pid ]]; then
      pid=$(cat "$dir/run/$d.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/run/$d.pid"
    fi
  done
}

if [[ $cmd == stop ]]; then stop; exit 0; fi
[[ $cmd == start ]] || { echo "cluster.sh: unknown command '$cmd' (start or stop)" >&2; exit 2; }
for b in munged slurmctld slurmd srun scontrol; do
  command -v "$b" >/dev/null || [[ -x /usr/sbin/$b ]] || { echo "cluster.sh: $b not found: run scripts/setup.sh --with-slurm" >&2; exit 2; }
done
mkdir -p "$dir"/{etc,run,log,spool/ctld,spool/d,munge,dev}
chmod 700 "$dir/munge"
# munge refuses a key or socket folder that others can write.
if [[ ! -s $dir/munge/munge.key ]]; then
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$dir/munge/munge.key"
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$dir/etc/slurm.conf" <<CONF
ClusterName=perfwatch-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/run/munge.socket
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MinJobAge=600
KillWait=2
InactiveLimit=0
MpiDefault=none
NodeName=$node CPUs=$cpus RealMemory=$mem Gres=gpu:4 State=UNKNOWN
PartitionName=hopper Nodes=$node Default=YES MaxTime=60 State=UP OverSubscribe=YES
PartitionName=blackwell Nodes=$node MaxTime=60 State=UP OverSubscribe=YES
CONF
# Slurm counts a "gpu" only with a device file; these stand for four GPUs
# (character devices like /dev/null; regular files where mknod is refused,
# which slurmd accepts with a warning). Nothing opens them.
mkdir -p "$dir/dev"
for i in 0 1 2 3; do
  [[ -e $dir/dev/gpu$i ]] || mknod "$dir/dev/gpu$i" c 1 3 2>/dev/null || : > "$dir/dev/gpu$i"
done
echo "NodeName=$node Name=gpu File=$dir/dev/gpu[0-3]" > "$dir/etc/gres.conf"
export SLURM_CONF=$dir/etc/slurm.conf
munged --socket="$dir/run/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 150); do
  state=$(sinfo -h -n "$node" -o '%T' 2>/dev/null | head -1 || true)
  if [[ $state == idle* || $state == mixed* ]]; then echo "SLURM_CONF=$SLURM_CONF"; exit 0; fi
  sleep 0.2
done
echo "cluster.sh: the node did not become idle in 30 s (state '${state:-none}'); logs in $dir/log" >&2
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
