//! The filesystem door: mcpbox's own `wasi:filesystem/types` and `preopens`, linked over
//! wasmtime-wasi's (`runtime/sandbox/linker.rs`), delegating every call to wasmtime-wasi's
//! implementation after seeing it. Opens, reads, writes, creations, renames, removals,
//! `set-size` and time changes pass here, per call, with their bytes: charged to the write
//! budgets before they happen (`quota.rs`), recorded after (`record.rs`). The sandbox itself
//! (cap-std's confinement to the preopens, read-only grants) stays wasmtime-wasi's: this door
//! only adds refusals, it never widens anything.
//!
//! Longer than the other files of this room, for a reason: it is one WIT interface's traits
//! (`types`, `HostDescriptor`, `HostDirectoryEntryStream`, `preopens`), method for method, each
//! delegating; split, one trait's impl would be spread over files.

use std::sync::Arc;

use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{ErrorCode, HostDescriptor, HostDirectoryEntryStream};
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsError, FsResult};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::file_door::FileDoor;
use super::quota::OverBudget;
use super::streams::{BudgetedWriter, CountedReader};

/// The door's view of a call's store: wasmtime-wasi's state and the call's [`FileDoor`].
pub struct Files<'a> {
    pub wasi: &'a mut WasiCtx,
    pub table: &'a mut ResourceTable,
    pub door: &'a mut FileDoor,
}

/// The `HasData` of the door's bindings.
pub struct FilesView;

impl HasData for FilesView {
    type Data<'a> = Files<'a>;
}

/// wasmtime-wasi's filesystem state, borrowed apart from the door.
struct Split<'b> {
    ctx: &'b mut WasiCtx,
    table: &'b mut ResourceTable,
}

impl WasiView for Split<'_> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: self.ctx, table: self.table }
    }
}

/// wasmtime-wasi's implementation, on which every call is made.
macro_rules! inner {
    ($files:ident) => {
        Split { ctx: &mut *$files.wasi, table: &mut *$files.table }
    };
}

/// A borrow of `fd` for a second call on it.
fn again(fd: &Resource<Descriptor>) -> Resource<Descriptor> {
    Resource::new_borrow(fd.rep())
}

fn quota(refusal: OverBudget) -> FsError {
    let _ = refusal;
    ErrorCode::Quota.into()
}

impl Files<'_> {
    /// The size of the file `fd` (0 if it is not a file or cannot be read).
    fn size_of(&self, fd: &Resource<Descriptor>) -> u64 {
        match self.table.get(fd) {
            Ok(Descriptor::File(file)) => file.file.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        }
    }

    /// Whether `path` under `fd` exists, and its type, size and link count if it does: the link
    /// itself without `SYMLINK_FOLLOW`, what it points at with it (as the call will use it).
    async fn look(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        flags: types::PathFlags,
    ) -> Option<types::DescriptorStat> {
        let mut split = inner!(self);
        let mut fs = split.filesystem();
        HostDescriptor::stat_at(&mut fs, again(fd), flags, path.to_owned()).await.ok()
    }

    /// The bytes and entries of the directory `path` under `fd`, walked whole (a directory
    /// moved into a budgeted tree brings all of it); an error when it cannot be.
    fn subtree(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
    ) -> impl std::future::Future<Output = Result<(u64, u64), String>> + Send + 'static {
        // The directory is cloned before the walk: the future holds no borrow of the store's
        // state (which is not Sync), so it stays Send.
        let file = match self.table.get(fd) {
            Ok(Descriptor::Dir(dir)) => dir.dir.try_clone().map_err(|e| e.to_string()),
            _ => Err("not a directory".to_owned()),
        };
        let path = path.to_owned();
        async move { measure_subtree(file?, path).await }
    }
}

/// The walk of [`Files::subtree`], on a blocking thread.
async fn measure_subtree(dir: std::fs::File, path: String) -> Result<(u64, u64), String> {
    tokio::task::spawn_blocking(move || {
        let dir = cap_std::fs::Dir::from_std_file(dir);
        // Called for what a stat without following found a directory; a link swapped in
        // since is followed inside the sandbox and its tree charged, too much, never too
        // little.
        let sub = dir.open_dir(&path).map_err(|e| e.to_string())?;
        super::quota::measure_dir(&sub)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// What a stat says a change frees in a tree: a regular file's size; a symbolic link's size is
/// its target's length, which no budget ever counted.
fn file_bytes(stat: &types::DescriptorStat) -> u64 {
    if stat.type_ == types::DescriptorType::RegularFile || crate::switched_off!("writes.regular-files-only") {
        stat.size
    } else {
        0
    }
}

impl Files<'_> {
    /// How the door stats what an open will use: as the open resolves it (a link followed when
    /// it follows), so that a creation through a dangling link is an entry made.
    fn as_opened(path_flags: types::PathFlags) -> types::PathFlags {
        if crate::switched_off!("writes.create-through-symlink-counted") {
            types::PathFlags::empty()
        } else {
            path_flags
        }
    }
}

impl preopens::Host for Files<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let mut split = inner!(self);
        let directories = preopens::Host::get_directories(&mut split.filesystem())?;
        for (fd, path) in &directories {
            self.door.preopened(fd.rep(), path);
        }
        Ok(directories)
    }
}

impl types::Host for Files<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut inner!(self).filesystem(), err)
    }

    fn filesystem_error_code(&mut self, err: Resource<wasmtime::Error>) -> wasmtime::Result<Option<ErrorCode>> {
        if self.table.get(&err)?.downcast_ref::<OverBudget>().is_some() {
            return Ok(Some(ErrorCode::Quota));
        }
        types::Host::filesystem_error_code(&mut inner!(self).filesystem(), err)
    }
}

/// Calls wasmtime-wasi's `HostDescriptor::$method` with the same arguments.
macro_rules! delegate {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {{
        let mut split = inner!($self);
        let mut fs: WasiFilesystemCtxView<'_> = split.filesystem();
        HostDescriptor::$method(&mut fs, $($arg),*).await
    }};
}

impl HostDescriptor for Files<'_> {
    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        delegate!(self.advise(fd, offset, len, advice))
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        delegate!(self.sync_data(fd))
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        delegate!(self.get_flags(fd))
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        delegate!(self.get_type(fd))
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        let Some(opened) = self.door.opened(fd.rep()) else { return delegate!(self.set_size(fd, size)) };
        let current = self.size_of(&fd);
        let growth = size.saturating_sub(current);
        self.door.hold(opened.grant).await;
        self.door.charge(opened.grant, &opened.path, growth, growth, 0).map_err(quota)?;
        let result = delegate!(self.set_size(fd, size));
        match &result {
            Ok(()) => {
                if let Some(held) = self.door.held(opened.grant) {
                    held.shrink(current.saturating_sub(size), 0);
                }
                self.door.record(|log| log.file(&opened.path, |f| f.size_set = Some(size)));
            }
            Err(_) => self.door.refund(opened.grant, growth, growth, 0),
        }
        result
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let opened = self.door.opened(fd.rep());
        let result = delegate!(self.set_times(fd, atim, mtim));
        if let (Ok(()), Some(opened)) = (&result, opened) {
            self.door.record(|log| log.file(&opened.path, |f| f.times_set = true));
        }
        result
    }

    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        let opened = self.door.opened(fd.rep());
        let result = delegate!(self.read(fd, len, offset));
        if let (Ok((bytes, _)), Some(opened)) = (&result, opened) {
            self.door.record(|log| log.read(&opened.path, bytes.len() as u64));
        }
        result
    }

    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        let Some(opened) = self.door.opened(fd.rep()) else { return delegate!(self.write(fd, buf, offset)) };
        let len = buf.len() as u64;
        let growth = offset.saturating_add(len).saturating_sub(self.size_of(&fd));
        // A write past the end makes the file that long: the hole counts, as for `set-size`.
        let written = if crate::switched_off!("writes.offset-charged") { len } else { len.max(growth) };
        self.door.charge(opened.grant, &opened.path, written, growth, 0).map_err(quota)?;
        let result = delegate!(self.write(fd, buf, offset));
        match &result {
            Ok(done) => self.door.record(|log| log.wrote(&opened.path, *done)),
            Err(_) => self.door.refund(opened.grant, written, growth, 0),
        }
        result
    }

    async fn read_directory(&mut self, fd: Resource<Descriptor>) -> FsResult<Resource<types::DirectoryEntryStream>> {
        let opened = self.door.opened(fd.rep());
        let result = delegate!(self.read_directory(fd));
        if let (Ok(_), Some(opened)) = (&result, opened) {
            self.door.record(|log| log.file(&opened.path, |f| f.listed = true));
        }
        result
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        delegate!(self.sync(fd))
    }

    async fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let Some((grant, full)) = self.door.path_under(fd.rep(), &path) else {
            return delegate!(self.create_directory_at(fd, path));
        };
        self.door.hold(grant).await;
        self.door.charge(grant, &full, 0, 0, 1).map_err(quota)?;
        let result = delegate!(self.create_directory_at(fd, path));
        match &result {
            Ok(()) => self.door.record(|log| log.file(&full, |f| f.created = true)),
            Err(_) => self.door.refund(grant, 0, 0, 1),
        }
        result
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorStat> {
        delegate!(self.stat(fd))
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        delegate!(self.stat_at(fd, path_flags, path))
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let full = self.door.path_under(fd.rep(), &path);
        let result = delegate!(self.set_times_at(fd, path_flags, path, atim, mtim));
        if let (Ok(()), Some((_, full))) = (&result, full) {
            self.door.record(|log| log.file(&full, |f| f.times_set = true));
        }
        result
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let Some((grant, full)) = self.door.path_under(new_descriptor.rep(), &new_path) else {
            return delegate!(self.link_at(fd, old_path_flags, old_path, new_descriptor, new_path));
        };
        // A link to a file of another tree brings its bytes in (its original may go next);
        // within one tree the file is counted once already.
        let same_tree = self.door.path_under(fd.rep(), &old_path).is_some_and(|(from, _)| from == grant);
        let bytes = if same_tree || crate::switched_off!("writes.link-charged") || !self.door.has_quota(grant) {
            0
        } else {
            self.look(&fd, &old_path, old_path_flags).await.map_or(0, |stat| file_bytes(&stat))
        };
        self.door.hold(grant).await;
        self.door.charge(grant, &full, 0, bytes, 1).map_err(quota)?;
        let result = delegate!(self.link_at(fd, old_path_flags, old_path, new_descriptor, new_path));
        match &result {
            Ok(()) => self.door.record(|log| log.file(&full, |f| f.created = true)),
            Err(_) => self.door.refund(grant, 0, bytes, 1),
        }
        result
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let Some((grant, full)) = self.door.path_under(fd.rep(), &path) else {
            return delegate!(self.open_at(fd, path_flags, path, oflags, flags));
        };
        let creates = oflags.contains(types::OpenFlags::CREATE);
        let truncates = oflags.contains(types::OpenFlags::TRUNCATE);
        let writes = flags.contains(types::DescriptorFlags::WRITE) || creates || truncates;
        // What stands there now: whether the open makes an entry, and what a truncation frees.
        let before = if (creates || truncates) && (self.door.has_quota(grant) || self.door.log.is_some()) {
            self.look(&fd, &path, Self::as_opened(path_flags)).await
        } else {
            None
        };
        let made = creates && before.is_none();
        if writes {
            self.door.hold(grant).await;
        }
        let entries = u64::from(made && self.door.has_quota(grant));
        self.door.charge(grant, &full, 0, 0, entries).map_err(quota)?;
        let result = delegate!(self.open_at(fd, path_flags, path, oflags, flags));
        let opened = match result {
            Ok(opened) => opened,
            Err(error) => {
                self.door.refund(grant, 0, 0, entries);
                if writes && matches!(error.downcast_ref(), Some(ErrorCode::NotPermitted | ErrorCode::ReadOnly)) {
                    self.door.record(|log| {
                        log.file(&full, |f| f.refused.push("read-only: the grant is not writable".into()))
                    });
                }
                return Err(error);
            }
        };
        let freed = if truncates { before.as_ref().map_or(0, file_bytes) } else { 0 };
        if freed > 0
            && let Some(held) = self.door.held(grant)
        {
            held.shrink(freed, 0);
        }
        let is_file = matches!(self.table.get(&opened), Ok(Descriptor::File(_)));
        self.door.record(|log| {
            if !is_file && !made {
                return;
            }
            log.file(&full, |f| {
                f.created |= made;
                if truncates && before.is_some() {
                    f.size_set = Some(0);
                }
                if is_file && flags.contains(types::DescriptorFlags::READ) {
                    f.read.get_or_insert(0);
                }
                if is_file && flags.contains(types::DescriptorFlags::WRITE) {
                    f.written.get_or_insert(0);
                }
            });
        });
        self.door.open(opened.rep(), grant, full);
        Ok(opened)
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.door.close(fd.rep());
        HostDescriptor::drop(&mut inner!(self).filesystem(), fd)
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        delegate!(self.readlink_at(fd, path))
    }

    async fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let full = self.door.path_under(fd.rep(), &path);
        let result = delegate!(self.remove_directory_at(fd, path));
        if let (Ok(()), Some((grant, full))) = (&result, full) {
            if let Some(held) = self.door.held(grant) {
                held.shrink(0, 1);
            }
            self.door.record(|log| log.file(&full, |f| f.removed = true));
        }
        result
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let (from, to) = (self.door.path_under(fd.rep(), &old_path), self.door.path_under(new_fd.rep(), &new_path));
        // Into another grant's tree: what moves is charged there and freed here.
        let moved = match (&from, &to) {
            (Some((a, _)), Some((b, full))) if a != b && self.door.has_quota(*b) => {
                let stat = self.look(&fd, &old_path, types::PathFlags::empty()).await;
                // A directory brings its whole subtree (walked; one that cannot be walked is
                // not moved), a file its bytes, a link none.
                let (bytes, entries) = match stat {
                    Some(stat)
                        if stat.type_ == types::DescriptorType::Directory
                            && !crate::switched_off!("writes.rename-subtree-charged") =>
                    {
                        let (bytes, entries) = self.subtree(&fd, &old_path).await.map_err(|why| {
                            quota(OverBudget(format!("a directory that cannot be measured ({why}) is not moved in")))
                        })?;
                        (bytes, entries + 1)
                    }
                    Some(stat) if stat.type_ == types::DescriptorType::Directory => (stat.size, 1),
                    Some(stat) => (file_bytes(&stat), 1),
                    None => (0, 1),
                };
                self.door.hold(*b).await;
                self.door.charge(*b, full, 0, bytes, entries).map_err(quota)?;
                Some((*a, *b, bytes, entries))
            }
            _ => None,
        };
        let result = delegate!(self.rename_at(fd, old_path, new_fd, new_path));
        match (&result, moved) {
            (Ok(()), Some((source, _, bytes, entries))) => {
                if let Some(held) = self.door.held(source) {
                    held.shrink(bytes, entries);
                }
            }
            (Err(_), Some((_, target, bytes, entries))) => self.door.refund(target, 0, bytes, entries),
            _ => {}
        }
        if let (Ok(()), Some((_, from)), Some((_, to))) = (&result, &from, to) {
            self.door.record(|log| log.file(from, |f| f.renamed_to = Some(to)));
        }
        result
    }

    async fn symlink_at(&mut self, fd: Resource<Descriptor>, src_path: String, dest_path: String) -> FsResult<()> {
        let Some((grant, full)) = self.door.path_under(fd.rep(), &dest_path) else {
            return delegate!(self.symlink_at(fd, src_path, dest_path));
        };
        self.door.hold(grant).await;
        self.door.charge(grant, &full, 0, 0, 1).map_err(quota)?;
        let result = delegate!(self.symlink_at(fd, src_path, dest_path));
        match &result {
            Ok(()) => self.door.record(|log| log.file(&full, |f| f.created = true)),
            Err(_) => self.door.refund(grant, 0, 0, 1),
        }
        result
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let full = self.door.path_under(fd.rep(), &path);
        let before = match &full {
            Some((grant, _)) if self.door.has_quota(*grant) => self.look(&fd, &path, types::PathFlags::empty()).await,
            _ => None,
        };
        let result = delegate!(self.unlink_file_at(fd, path));
        if let (Ok(()), Some((grant, full))) = (&result, full) {
            if let Some(held) = self.door.held(grant) {
                // The last link of a regular file frees its bytes; every link is an entry.
                let freed = before.filter(|stat| stat.link_count <= 1).map_or(0, |stat| file_bytes(&stat));
                held.shrink(freed, 1);
            }
            self.door.record(|log| log.file(&full, |f| f.removed = true));
        }
        result
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        let opened = self.door.opened(fd.rep());
        let stream = HostDescriptor::read_via_stream(&mut inner!(self).filesystem(), fd, offset)?;
        let (Some(opened), Some(log)) = (opened, self.door.log.clone()) else { return Ok(stream) };
        let inner = self.table.delete(stream)?;
        let counted: DynInputStream = Box::new(CountedReader { inner, log, path: opened.path });
        Ok(self.table.push(counted)?)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        let (end, file) = (self.size_of(&fd), self.file_of(&fd));
        let opened = self.door.opened(fd.rep());
        let stream = HostDescriptor::write_via_stream(&mut inner!(self).filesystem(), fd, offset)?;
        self.budgeted(stream, opened, offset, (end, file), false)
    }

    fn append_via_stream(&mut self, fd: Resource<Descriptor>) -> FsResult<Resource<DynOutputStream>> {
        let (end, file) = (self.size_of(&fd), self.file_of(&fd));
        let opened = self.door.opened(fd.rep());
        let stream = HostDescriptor::append_via_stream(&mut inner!(self).filesystem(), fd)?;
        self.budgeted(stream, opened, end, (end, file), true)
    }

    async fn is_same_object(&mut self, a: Resource<Descriptor>, b: Resource<Descriptor>) -> wasmtime::Result<bool> {
        delegate!(self.is_same_object(a, b))
    }

    async fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> FsResult<types::MetadataHashValue> {
        delegate!(self.metadata_hash(fd))
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        delegate!(self.metadata_hash_at(fd, path_flags, path))
    }
}

impl Files<'_> {
    /// The file `fd` opens (its size is asked again at each stream write: another descriptor
    /// may have changed it since the stream was made).
    fn file_of(&self, fd: &Resource<Descriptor>) -> Option<Arc<std::fs::File>> {
        match self.table.get(fd) {
            Ok(Descriptor::File(file)) => Some(file.file.clone()),
            _ => None,
        }
    }

    /// `stream`, a file's output stream, under the call's write budgets.
    fn budgeted(
        &mut self,
        stream: Resource<DynOutputStream>,
        opened: Option<super::file_door::Opened>,
        position: u64,
        (end, file): (u64, Option<Arc<std::fs::File>>),
        append: bool,
    ) -> FsResult<Resource<DynOutputStream>> {
        let (path, grant) = match opened {
            Some(opened) => (opened.path, opened.grant),
            None => (Arc::from("?"), usize::MAX),
        };
        let inner = self.table.delete(stream)?;
        let writer = BudgetedWriter {
            inner,
            path,
            position,
            end,
            file,
            unlanded: 0,
            append,
            tree: self.door.held(grant),
            refusals: self.door.refusals(grant),
        };
        Ok(self.table.push(Box::new(writer) as DynOutputStream)?)
    }
}

impl HostDirectoryEntryStream for Files<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        let mut split = inner!(self);
        HostDirectoryEntryStream::read_directory_entry(&mut split.filesystem(), stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut inner!(self).filesystem(), stream)
    }
}
