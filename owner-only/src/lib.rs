//! Owner-only access to Tabwire's private files and folders on Windows, where Unix modes
//! (0600/0700, the server's `user_dirs.rs`) do not exist: a protected DACL (inheriting nothing from the parent
//! folder) with one ACE, full control for the current user's SID. A folder's ACE is inherited by
//! what is created in it later (`OI` objects, `CI` containers), so the files Tabwire writes in its
//! folders are owner-only too; the pairing secret and the extension's `pairing.json` also get it
//! explicitly, since they may live in a folder the user chose.
//!
//! The descriptor is written and read back as SDDL text (`D:P(A;OICI;FA;;;S-1-5-21-…)`), so its
//! construction ([`owner_only_sddl`]) and its check ([`is_owner_only`]) are plain string functions,
//! tested on every OS; the Win32 calls only convert between that text and the file's descriptor.
//! `tabwire doctor` prints what it reads back ([`describe`]).

use std::io;
use std::path::Path;

/// What the descriptor is for: a folder's ACE is inherited by what is created in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    File,
    Folder,
}

/// The SDDL of a protected DACL granting full control (`FA`, FILE_ALL_ACCESS) to `user_sid` only.
pub fn owner_only_sddl(user_sid: &str, target: Target) -> String {
    let inheritance = match target {
        Target::File => "",
        Target::Folder => "OICI",
    };
    format!("D:P(A;{inheritance};FA;;;{user_sid})")
}

/// Who besides `user_sid` a DACL read back (SDDL) lets in: the trustee of every allow ACE that is
/// not the user, SYSTEM (`SY`) or the Administrators (`BA`), who can take any file anyway. Empty
/// means only the user can read it. A missing DACL lets everyone in. The ACL Tabwire sets names the
/// user alone; this check also accepts what a system writes back for it (Windows adds `AI` flags,
/// Wine rebuilds a DACL from the Unix mode it set, with SYSTEM in it).
pub fn others_with_access(sddl: &str, user_sid: &str) -> Vec<String> {
    let Some(dacl) = sddl.split_once("D:").map(|(_, rest)| rest) else {
        return vec!["everyone (no DACL)".to_owned()];
    };
    // Other sections (S: for the SACL) would follow the ACEs; a DACL read alone has none.
    let dacl = dacl.split("S:").next().unwrap_or(dacl);
    if dacl.starts_with("NO_ACCESS_CONTROL") {
        return vec!["everyone (no DACL)".to_owned()];
    }
    let Some((_flags, aces)) = dacl.split_once('(') else {
        return Vec::new(); // an empty DACL: nobody at all
    };
    aces.split(')')
        .map(|ace| ace.trim_start_matches('('))
        .filter(|ace| !ace.is_empty())
        .filter_map(|ace| {
            let fields: Vec<&str> = ace.split(';').collect();
            let trustee = fields.last().copied().unwrap_or_default();
            let allows = fields
                .first()
                .is_some_and(|kind| *kind == "A" || *kind == "OA");
            let trusted =
                trustee.eq_ignore_ascii_case(user_sid) || trustee == "SY" || trustee == "BA";
            (allows && !trusted).then(|| trustee.to_owned())
        })
        .collect()
}

/// Gives `path` the owner-only DACL (nothing to do on other systems: their modes do it).
pub fn restrict(path: &Path, target: Target) -> io::Result<()> {
    #[cfg(windows)]
    {
        let sid = win::current_user_sid()?;
        win::set_dacl(path, &owner_only_sddl(&sid, target))
    }
    #[cfg(not(windows))]
    {
        let _ = (path, target);
        Ok(())
    }
}

/// What `path`'s DACL says, for `doctor`: who else it lets in ([`others_with_access`]) and the
/// DACL as SDDL. Windows only.
#[cfg(windows)]
pub fn describe(path: &Path) -> io::Result<(Vec<String>, String)> {
    let sid = win::current_user_sid()?;
    let sddl = win::read_dacl(path)?;
    Ok((others_with_access(&sddl, &sid), sddl))
}

#[cfg(windows)]
#[allow(unsafe_code)] // FFI to advapi32/kernel32; each block says why it is sound.
mod win {
    //! The Win32 calls: the current user's SID, and a file's DACL to and from SDDL.
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
    use windows_sys::Win32::Security::Authorization::{
        ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
        ConvertStringSecurityDescriptorToSecurityDescriptorW, GetNamedSecurityInfoW,
        SE_FILE_OBJECT,
    };
    use windows_sys::Win32::Security::{
        DACL_SECURITY_INFORMATION, GetTokenInformation, PROTECTED_DACL_SECURITY_INFORMATION,
        PSECURITY_DESCRIPTOR, SetFileSecurityW, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

    const SDDL_REVISION_1: u32 = 1;

    fn wide(text: &std::ffi::OsStr) -> Vec<u16> {
        text.encode_wide().chain(std::iter::once(0)).collect()
    }

    /// Reads a NUL-terminated UTF-16 string the system allocated, and frees it.
    ///
    /// # Safety
    /// `ptr` is a NUL-terminated UTF-16 string from `LocalAlloc`, not used after this call.
    unsafe fn take_wide(ptr: *mut u16) -> String {
        let mut len = 0;
        // SAFETY: the caller's NUL-terminated string: every index up to the NUL is in it.
        while unsafe { *ptr.add(len) } != 0 {
            len += 1;
        }
        // SAFETY: the `len` units before the NUL, read above.
        let text = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(ptr, len) });
        // SAFETY: the caller's LocalAlloc'd string, freed once, not used afterwards.
        unsafe { LocalFree(ptr.cast()) };
        text
    }

    /// The SID of the user this process runs as, as text (`S-1-5-21-…`).
    pub fn current_user_sid() -> io::Result<String> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: plain Win32 calls on this process's own token, buffers sized as the system said.
        unsafe {
            if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
                return Err(io::Error::last_os_error());
            }
            let mut needed = 0u32;
            GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut needed);
            // u64 elements: TOKEN_USER holds pointers, so the buffer must be pointer-aligned.
            let mut buffer = vec![0u64; (needed as usize).div_ceil(8).max(1)];
            let ok = GetTokenInformation(
                token,
                TokenUser,
                buffer.as_mut_ptr().cast(),
                (buffer.len() * 8) as u32,
                &mut needed,
            );
            let error = io::Error::last_os_error();
            CloseHandle(token);
            if ok == 0 {
                return Err(error);
            }
            let user = &*(buffer.as_ptr() as *const TOKEN_USER);
            let mut text: *mut u16 = std::ptr::null_mut();
            if ConvertSidToStringSidW(user.User.Sid, &mut text) == 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(take_wide(text))
        }
    }

    /// Replaces `path`'s DACL with the one `sddl` describes, protected from inheritance.
    /// `SetFileSecurityW` writes the descriptor as given, its `P` (SE_DACL_PROTECTED) included;
    /// `SetNamedSecurityInfoW` would do the same on Windows, but Wine merges the parent's
    /// inheritable ACEs into it whatever the flags say, and the test runs under Wine.
    pub fn set_dacl(path: &Path, sddl: &str) -> io::Result<()> {
        let text = wide(std::ffi::OsStr::new(sddl));
        let name = wide(path.as_os_str());
        // SAFETY: NUL-terminated inputs; the descriptor is the system's allocation, freed once.
        unsafe {
            let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
            if ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            ) == 0
            {
                return Err(io::Error::last_os_error());
            }
            let set = SetFileSecurityW(
                name.as_ptr(),
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                descriptor,
            );
            let error = io::Error::last_os_error();
            LocalFree(descriptor);
            if set == 0 { Err(error) } else { Ok(()) }
        }
    }

    /// `path`'s DACL as SDDL text.
    pub fn read_dacl(path: &Path) -> io::Result<String> {
        let name = wide(path.as_os_str());
        // SAFETY: the descriptor and the string are the system's allocations, each freed once.
        unsafe {
            let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
            let code = GetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut descriptor,
            );
            if code != 0 {
                return Err(io::Error::from_raw_os_error(code as i32));
            }
            let mut text: *mut u16 = std::ptr::null_mut();
            let ok = ConvertSecurityDescriptorToStringSecurityDescriptorW(
                descriptor,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                std::ptr::null_mut(),
            );
            let error = io::Error::last_os_error();
            LocalFree(descriptor);
            if ok == 0 {
                return Err(error);
            }
            Ok(take_wide(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "S-1-5-21-1004336348-1177238915-682003330-1000";

    #[test]
    fn the_descriptor_is_a_protected_dacl_for_the_user_alone_inherited_in_folders() {
        assert_eq!(
            owner_only_sddl(SID, Target::File),
            format!("D:P(A;;FA;;;{SID})")
        );
        assert_eq!(
            owner_only_sddl(SID, Target::Folder),
            format!("D:P(A;OICI;FA;;;{SID})")
        );
        for target in [Target::File, Target::Folder] {
            assert!(others_with_access(&owner_only_sddl(SID, target), SID).is_empty());
        }
    }

    #[test]
    fn others_are_whoever_an_allow_ace_lets_in_besides_the_user_system_and_admins() {
        // As Windows writes ours back (auto-inherited flags, lower-case SID), as Wine rebuilds it
        // from the Unix mode it set, and an ACL with a deny ACE: nobody else.
        assert!(others_with_access(&format!("D:PAI(A;OICI;FA;;;{SID})"), SID).is_empty());
        assert!(
            others_with_access(
                &format!("D:(A;;FA;;;SY)(A;;FA;;;{})", SID.to_lowercase()),
                SID
            )
            .is_empty()
        );
        assert!(
            others_with_access(&format!("D:P(D;;FA;;;WD)(A;;FA;;;{SID})(A;;FA;;;BA)"), SID)
                .is_empty()
        );
        // What Wine reads back for a file Tabwire did not restrict, a profile folder's inherited
        // ACL, another user, no DACL at all.
        assert_eq!(
            others_with_access(
                &format!("D:(A;;FA;;;SY)(A;;FA;;;{SID})(A;;0x1200a9;;;WD)"),
                SID
            ),
            ["WD"]
        );
        assert_eq!(
            others_with_access(
                &format!("D:AI(A;ID;FA;;;{SID})(A;OICIID;0x1200a9;;;BU)"),
                SID
            ),
            ["BU"]
        );
        assert_eq!(
            others_with_access("D:P(A;;FA;;;S-1-5-21-1-2-3-1001)", SID),
            ["S-1-5-21-1-2-3-1001"]
        );
        assert_eq!(
            others_with_access("D:NO_ACCESS_CONTROL", SID),
            ["everyone (no DACL)"]
        );
        assert_eq!(others_with_access("", SID), ["everyone (no DACL)"]);
    }

    #[test]
    fn restricting_is_harmless_where_modes_do_the_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "x").unwrap();
        restrict(&file, Target::File).unwrap();
        restrict(dir.path(), Target::Folder).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }
}
