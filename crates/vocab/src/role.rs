//! The roles of accounts.

/// What a signed-in account may do. Ordered by privilege for display only; checks name roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Researcher,
    Annotator,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Admin, Role::Researcher, Role::Annotator];
    /// Who may do what: the role lists the server's checks name.
    pub const ADMINS: &'static [Role] = &[Role::Admin];
    pub const STAFF: &'static [Role] = &[Role::Admin, Role::Researcher];
    pub const ANYONE: &'static [Role] = &Role::ALL;

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Researcher => "researcher",
            Role::Annotator => "annotator",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Admins and researchers read studies and results.
    pub fn is_staff(self) -> bool {
        matches!(self, Role::Admin | Role::Researcher)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
